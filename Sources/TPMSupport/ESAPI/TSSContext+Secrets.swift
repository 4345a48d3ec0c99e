import CTSS2
import FoundationEssentials
import OpenSSLSupport

/// The steps that carry a secret across the TPM's bus, each in a session that encrypts it (see
/// ``TSSContext/withEncryptingSession(salt:_:_:)``). What the TPM returns is copied out of ESAPI's structure, which is
/// wiped before it is freed; the caller wipes the copy (``cleanse(_:)``).
extension TSSContext {
    /// `TPM2_ActivateCredential`: the secret a verifier sealed to `ek` (its marshaled `TPM2B_ID_OBJECT` and
    /// `TPM2B_ENCRYPTED_SECRET`) for the key named like `ak`, released only if both are loaded in this TPM. The
    /// endorsement key's policy is satisfied in a policy session of its own; the secret comes back encrypted in a
    /// third session, salted to `ek`.
    func activateCredential(_ ak: ESYS_TR, _ ek: ESYS_TR, blob: Data, encryptedSecret: Data) throws(TPMFailure) -> [UInt8] {
        var credential = try unmarshaled(blob, into: TPM2B_ID_OBJECT(), Tss2_MU_TPM2B_ID_OBJECT_Unmarshal)
        var seed = try unmarshaled(encryptedSecret, into: TPM2B_ENCRYPTED_SECRET(), Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal)
        return try withEncryptingSession(salt: ek, TPMA_SESSION(TPMA_SESSION_ENCRYPT)) { (encrypting) throws(TPMFailure) in
            try withEndorsementSession { (policy) throws(TPMFailure) in
                var released: UnsafeMutablePointer<TPM2B_DIGEST>?
                try step("Esys_ActivateCredential") {
                    Esys_ActivateCredential($0, ak, ek, passwordSession, policy, encrypting, &credential, &seed, &released)
                }
                guard let released else { throw .failed("Esys_ActivateCredential: no credential") }
                return try takingSecret(released, \.buffer, count: Int(released.pointee.size))
            }
        }
    }

    /// `TPM2_ECDH_ZGen`: the x coordinate of `key`'s private scalar times the P-256 point (`x`, `y`), an ECDH shared
    /// secret, which comes back encrypted, in a session salted to `salt`.
    func sharedSecret(_ key: ESYS_TR, salt: ESYS_TR, x: [UInt8], y: [UInt8]) throws(TPMFailure) -> [UInt8] {
        var peer = TPM2B_ECC_POINT()
        guard let xSize = x.withUnsafeBytes({ filling(&peer.point.x.buffer, with: $0) }),
              let ySize = y.withUnsafeBytes({ filling(&peer.point.y.buffer, with: $0) }) else {
            throw .failed("TPM2_ECDH_ZGen: a coordinate is too long")
        }
        (peer.point.x.size, peer.point.y.size) = (xSize, ySize)
        return try withEncryptingSession(salt: salt, TPMA_SESSION(TPMA_SESSION_ENCRYPT)) { (session) throws(TPMFailure) in
            var shared: UnsafeMutablePointer<TPM2B_ECC_POINT>?
            try step("Esys_ECDH_ZGen") { Esys_ECDH_ZGen($0, key, session, noSession, noSession, &peer, &shared) }
            guard let shared else { throw .failed("Esys_ECDH_ZGen: no point") }
            return try takingSecret(shared, \.point.x.buffer, count: Int(shared.pointee.point.x.size))
        }
    }

    /// `data` sealed under `parent` as libsecret's keyring file seals its password (``TPMTemplate/sealedData``); the
    /// data crosses the bus encrypted, in a session salted to `parent`. The copy of `data` made for the TPM is wiped.
    func seal(_ data: [UInt8], under parent: ESYS_TR) throws(TPMFailure) -> SealedData {
        var sensitive = TPM2B_SENSITIVE_CREATE()
        defer { withUnsafeMutableBytes(of: &sensitive) { cleanse($0) } }
        guard let size = data.withUnsafeBytes({ filling(&sensitive.sensitive.data.buffer, with: $0) }) else { throw .failed("Esys_Create(sealed data): too much data") }
        sensitive.sensitive.data.size = size
        let (privateArea, publicArea) = try withEncryptingSession(salt: parent, TPMA_SESSION(TPMA_SESSION_DECRYPT)) { (session) throws(TPMFailure) in
            try create("Esys_Create(sealed data)", under: parent, session: session, TPMTemplate.sealedData, sensitive: &sensitive)
        }
        guard privateArea.count <= SealedData.maximumAreaSize, publicArea.count <= SealedData.maximumAreaSize else {
            throw .failed("Esys_Create(sealed data): areas larger than a keyring file's reader takes")
        }
        return SealedData(privateArea: privateArea, publicArea: publicArea)
    }

    /// What ``seal(_:under:)`` (or libsecret) sealed under `parent`; the data crosses the bus encrypted, in a session
    /// salted to `parent`.
    func unseal(_ sealed: SealedData, under parent: ESYS_TR) throws(TPMFailure) -> [UInt8] {
        let object = try load("Esys_Load(sealed data)", publicArea: sealed.publicArea, privateArea: sealed.privateArea, under: parent)
        defer { flush(object) }
        return try withEncryptingSession(salt: parent, TPMA_SESSION(TPMA_SESSION_ENCRYPT)) { (session) throws(TPMFailure) in
            var unsealed: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
            try step("Esys_Unseal(sealed data)") { Esys_Unseal($0, object, session, noSession, noSession, &unsealed) }
            guard let unsealed else { throw .failed("Esys_Unseal(sealed data): no data") }
            return try takingSecret(unsealed, \.buffer, count: Int(unsealed.pointee.size))
        }
    }
}
