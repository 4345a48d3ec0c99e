import FoundationEssentials
import OpenSSLSupport

/// The key a device seals its TPM attestation to: the verifying server's (`deviceid-server` answers it at
/// `GET /v1/tpm/attestation_key`). Sealed, an attestation shows the backend that relays a token nothing: the
/// endorsement certificate (a hardware serial, the same for every app and team on the machine) and the attestation key
/// reach the server alone, as Apple's device tokens are opaque to developers. Each token's is sealed anew (``ECIES``,
/// a one-time key each time): no two tokens share a byte of it, and every one has the same length.
public struct AttestationRecipient: Sendable, Hashable {
    /// The public key: an X9.63 uncompressed P-256 point (65 bytes).
    public let publicKey: Data
    /// The same key, read once: every seal uses it.
    private let key: P256Key

    /// The recipient whose key is `publicKey`; ``TPMAttestationError/malformed(_:)`` unless it is a P-256 point.
    public init(publicKey: Data) throws(TPMAttestationError) {
        guard let key = try? P256Key(publicKeyX963: [UInt8](publicKey)) else { throw .malformed("the attestation key is not a P-256 point") }
        self.publicKey = publicKey
        self.key = key
    }

    /// Whether two recipients have the same key.
    public static func == (left: Self, right: Self) -> Bool { left.publicKey == right.publicKey }

    /// Hashes the key.
    public func hash(into hasher: inout Hasher) { hasher.combine(publicKey) }

    /// `attestation` sealed to this recipient: a token header's `tps`, of one length whatever the TPM
    /// (``paddedMessage(_:)``).
    package func seal(_ attestation: TPMAttestation) throws -> Data {
        try seal(try attestation.json, context: AttestationOpener.context)
    }

    /// Evidence of `kind` sealed to this recipient, as the server's endpoint for it takes it: the team's backend that
    /// relays it reads nothing of the TPM (no clock, no attestation key). Its length (big-endian, in
    /// ``SealedEvidence/lengthSize`` bytes) first, then padded with spaces to ``SealedEvidence/paddedLength(of:)``.
    package func seal(evidence: Data, as kind: SealedEvidence = .appAttest) throws -> Data {
        precondition(evidence.count <= kind.maximumSize, "\(kind) evidence is at most \(kind.maximumSize) bytes")
        let message = Data(CBOR.bigEndian(UInt64(evidence.count), count: kind.lengthSize)) + evidence
        let padded = message + Data(repeating: 0x20, count: kind.paddedLength(of: message.count) - message.count)
        return Data(try padded.withUnsafeBytes { padded in try ECIES.seal(padded, to: key, context: kind.context) })
    }

    private func seal(_ message: Data, context: [UInt8]) throws -> Data {
        Data(try Self.paddedMessage(message).withUnsafeBytes { message in try ECIES.seal(message, to: key, context: context) })
    }

    /// The length every sealed message is padded to: room for an endorsement certificate of 2,240 bytes beside an RSA
    /// device key (a TPM's NV index for it commonly holds at most 2,048 bytes, and makers' certificates are about 1 to
    /// 1.5 KB), so the length of a token says nothing about its TPM's certificate (its maker, its model, its serial).
    static let paddedLength = 4_608

    /// `json` followed by spaces (which every JSON reader skips, the server's of earlier versions too) up to
    /// ``paddedLength``, or for a longer one up to the next multiple of 512 bytes.
    static func paddedMessage(_ json: Data) -> Data {
        json + Data(repeating: 0x20, count: paddedLength(of: json.count) - json.count)
    }

    /// The length a message of `count` bytes is padded to.
    static func paddedLength(of count: Int) -> Int {
        count <= paddedLength ? paddedLength : (count + 511) / 512 * 512
    }
}

/// The verifying server's private key, which opens the attestations devices seal to its ``recipient``.
public struct AttestationOpener: Sendable {
    private let key: P256Key
    /// The public half, for devices.
    public let recipient: AttestationRecipient

    /// What a sealed attestation is sealed under.
    static let context = Array("swift-deviceid/sealed-tpm-attestation/v1".utf8) + [0]

    /// The opener whose private key is `privateKey` (`04‖X‖Y‖D`, 97 bytes, as ``makePrivateKey()`` makes it).
    public init(privateKey: [UInt8]) throws(TPMAttestationError) {
        do {
            key = try privateKey.withUnsafeBytes { bytes throws(OpenSSLFailure) in try P256Key(privateKeyX963: bytes) }
            recipient = try AttestationRecipient(publicKey: try key.publicKeyX963())
        } catch let error as TPMAttestationError {
            throw error
        } catch {
            throw .malformed("the attestation opening key: \(error)")
        }
    }

    /// A new private key (`04‖X‖Y‖D`), for ``init(privateKey:)``: keep it with the server's secrets.
    public static func makePrivateKey() throws -> [UInt8] {
        [UInt8](try P256Key.generate().privateKeyX963())
    }

    /// The attestation `sealed` (a token header's `tps`) holds; ``TPMAttestationError/malformed(_:)`` when it was not
    /// sealed to this key, or was altered.
    public func open(_ sealed: Data) throws(TPMAttestationError) -> TPMAttestation {
        guard let message = open(sealed, context: Self.context), let attestation = TPMAttestation(json: Data(message)) else {
            throw .malformed("the sealed attestation does not open with this server's key")
        }
        return attestation
    }

    /// The evidence of `kind` that `sealed` holds, as ``AttestationRecipient/seal(evidence:as:)`` sealed it;
    /// ``TPMAttestationError/malformed(_:)`` when it was not sealed to this key as that kind, or was altered, or its
    /// length and padding are not the one way of writing them.
    public func openEvidence(_ sealed: Data, as kind: SealedEvidence = .appAttest) throws(TPMAttestationError) -> Data {
        let most = kind.paddedLength(of: kind.lengthSize + kind.maximumSize) + ECIES.overhead
        guard sealed.count <= most, let message = open(sealed, context: kind.context), message.count >= kind.lengthSize else {
            throw .malformed("the sealed evidence does not open with this server's key")
        }
        let length = message.prefix(kind.lengthSize).reduce(0) { $0 << 8 | Int($1) }
        guard length <= message.count - kind.lengthSize, message.count == kind.paddedLength(of: kind.lengthSize + length),
              message[(kind.lengthSize + length)...].allSatisfy({ $0 == 0x20 }) else {
            throw .malformed("the sealed evidence is not padded as it is sealed")
        }
        return Data(message[kind.lengthSize..<(kind.lengthSize + length)])
    }

    private func open(_ sealed: Data, context: [UInt8]) -> [UInt8]? {
        guard sealed.count > ECIES.overhead else { return nil }
        var message = [UInt8](repeating: 0, count: sealed.count - ECIES.overhead)
        let authentic = try? sealed.withUnsafeBytes { sealed in
            try message.withUnsafeMutableBytes { message in try ECIES.open(sealed, with: key, context: context, into: message) }
        }
        return authentic == true ? message : nil
    }
}
