/// How an ECDSA signature is written. RSA signatures have one form; this choice leaves them alone.
public enum SignatureEncoding: Sendable, Hashable {
    /// `r‖s`, 32 bytes each: what JWS (RFC 7518) and WebAuthn-style servers take.
    case raw
    /// The DER `ECDSA-Sig-Value`: what OpenSSL, X.509 and `openssl dgst -verify` take.
    case der
}
