import FoundationEssentials
import OpenSSLSupport

/// The nonces `deviceid-server` issues for integrity verdicts: 32 bytes from the system's generator, kept as their
/// SHA-256 until taken once.
public enum IntegrityNonce {
    /// The size of a nonce.
    public static let size = 32

    /// A new nonce.
    public static func make() -> Data {
        var generator = SystemRandomNumberGenerator()   // getrandom(2)
        return Data((0..<size).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// What a server keeps of `nonce`: its SHA-256.
    public static func digest(of nonce: Data) -> Data { Data(Digest.sha256(nonce)) }
}
