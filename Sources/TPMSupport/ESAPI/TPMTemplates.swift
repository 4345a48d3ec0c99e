import CTSS2

/// The public-area templates of the objects the library makes in a TPM. The same template makes the same primary key
/// from the same seed, so each must stay byte for byte what it is: the endorsement key's is the TCG's, the storage
/// keys' are those of the programs whose keys they load (OpenSSL's `tpm2` provider, libsecret).
enum TPMTemplate {
    /// The RSA-2048 endorsement key of the TCG EK Credential Profile (template L-1), whose certificate is at NV index
    /// 0x01C00002: made again from the endorsement seed, the same key every time.
    static var endorsementKey: TPM2B_PUBLIC {
        var template = object(TPM2_ALG_RSA, [
            TPMA_OBJECT_FIXEDTPM, TPMA_OBJECT_FIXEDPARENT, TPMA_OBJECT_SENSITIVEDATAORIGIN, TPMA_OBJECT_ADMINWITHPOLICY,
            TPMA_OBJECT_RESTRICTED, TPMA_OBJECT_DECRYPT,
        ])
        // PolicySecret(TPM_RH_ENDORSEMENT)
        let policy: [UInt8] = [
            0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xB3, 0xF8, 0x1A, 0x90, 0xCC, 0x8D, 0x46, 0xA5, 0xD7, 0x24,
            0xFD, 0x52, 0xD7, 0x6E, 0x06, 0x52, 0x0B, 0x64, 0xF2, 0xA1, 0xDA, 0x1B, 0x33, 0x14, 0x69, 0xAA,
        ]
        template.publicArea.authPolicy.size = UInt16(policy.count)
        withUnsafeMutableBytes(of: &template.publicArea.authPolicy.buffer) { $0.copyBytes(from: policy) }
        template.publicArea.parameters.rsaDetail = rsaStorage
        template.publicArea.unique.rsa.size = 256
        return template
    }

    /// An attestation key: a restricted P-256 ECDSA-SHA256 signing key that never leaves the TPM, made again from the
    /// owner seed as a primary key (the same key until the TPM is cleared, so nothing needs storing). `unique` (at most
    /// 32 bytes) goes into `unique.ecc.x`, which the key is derived from: each value makes another key.
    static func attestationKey(unique: [UInt8]) -> TPM2B_PUBLIC {
        precondition(unique.count <= 32, "an attestation key's unique value is at most 32 bytes")
        var template = object(TPM2_ALG_ECC, [
            TPMA_OBJECT_FIXEDTPM, TPMA_OBJECT_FIXEDPARENT, TPMA_OBJECT_SENSITIVEDATAORIGIN, TPMA_OBJECT_USERWITHAUTH,
            TPMA_OBJECT_RESTRICTED, TPMA_OBJECT_SIGN_ENCRYPT, TPMA_OBJECT_NODA,
        ])
        var ecc = eccSigning
        ecc.scheme.scheme = TPM2_ALG_ECDSA
        ecc.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256
        template.publicArea.parameters.eccDetail = ecc
        template.publicArea.unique.ecc.x.size = UInt16(unique.count)
        withUnsafeMutableBytes(of: &template.publicArea.unique.ecc.x.buffer) { $0.copyBytes(from: unique) }
        return template
    }

    /// The endorsement key's witness: an unrestricted P-256 signing key made under the endorsement key, whose certified
    /// qualified name shows the template of its parent.
    static var witness: TPM2B_PUBLIC {
        var template = object(TPM2_ALG_ECC, [
            TPMA_OBJECT_FIXEDTPM, TPMA_OBJECT_FIXEDPARENT, TPMA_OBJECT_SENSITIVEDATAORIGIN, TPMA_OBJECT_USERWITHAUTH,
            TPMA_OBJECT_SIGN_ENCRYPT, TPMA_OBJECT_NODA,
        ])
        template.publicArea.parameters.eccDetail = eccSigning
        return template
    }

    /// The storage key OpenSSL's `tpm2` provider (1.1) makes keys under when their parent is the owner hierarchy
    /// (0x40000001): its own P-256 template, or RSA-2048 on a TPM without ECC.
    static func providerParent(rsa: Bool) -> TPM2B_PUBLIC {
        var template = object(rsa ? TPM2_ALG_RSA : TPM2_ALG_ECC, [
            TPMA_OBJECT_USERWITHAUTH, TPMA_OBJECT_RESTRICTED, TPMA_OBJECT_DECRYPT, TPMA_OBJECT_NODA, TPMA_OBJECT_FIXEDTPM,
            TPMA_OBJECT_FIXEDPARENT, TPMA_OBJECT_SENSITIVEDATAORIGIN,
        ])
        if rsa {
            template.publicArea.parameters.rsaDetail = rsaStorage
        } else {
            var ecc = TPMS_ECC_PARMS()
            ecc.symmetric = aes128CFB
            ecc.scheme.scheme = TPM2_ALG_NULL
            ecc.curveID = TPM2_ECC_NIST_P256
            ecc.kdf.scheme = TPM2_ALG_NULL
            template.publicArea.parameters.eccDetail = ecc
        }
        return template
    }

    /// The primary key libsecret's keyring file (`egg/egg-tpm2.c`) seals its password under: an RSA-2048 storage key
    /// of its own template, made again from the owner seed each time.
    static var keyringParent: TPM2B_PUBLIC {
        var template = object(TPM2_ALG_RSA, [
            TPMA_OBJECT_USERWITHAUTH, TPMA_OBJECT_RESTRICTED, TPMA_OBJECT_DECRYPT, TPMA_OBJECT_FIXEDTPM,
            TPMA_OBJECT_FIXEDPARENT, TPMA_OBJECT_SENSITIVEDATAORIGIN,
        ])
        template.publicArea.parameters.rsaDetail = rsaStorage
        return template
    }

    /// A data object as libsecret's keyring file seals its password: keyed-hash, no scheme, an empty password.
    static var sealedData: TPM2B_PUBLIC {
        var template = object(TPM2_ALG_KEYEDHASH, [TPMA_OBJECT_USERWITHAUTH, TPMA_OBJECT_FIXEDTPM, TPMA_OBJECT_FIXEDPARENT])
        template.publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL
        template.publicArea.parameters.keyedHashDetail.scheme.details.hmac.hashAlg = TPM2_ALG_SHA256
        return template
    }

    /// Whether `publicArea` is that of a data object sealed as ``sealedData`` makes one (named with SHA-256).
    static func isSealedData(_ publicArea: TPMT_PUBLIC) -> Bool {
        publicArea.type == TPM2_ALG_KEYEDHASH && publicArea.nameAlg == TPM2_ALG_SHA256
            && publicArea.parameters.keyedHashDetail.scheme.scheme == TPM2_ALG_NULL
    }

    /// An object of `type`, named with SHA-256, with `attributes`; everything else zero.
    private static func object(_ type: TPMI_ALG_PUBLIC, _ attributes: [TPMA_OBJECT]) -> TPM2B_PUBLIC {
        var template = TPM2B_PUBLIC()
        template.publicArea.type = type
        template.publicArea.nameAlg = TPM2_ALG_SHA256
        template.publicArea.objectAttributes = attributes.reduce(0, |)
        return template
    }

    /// AES-128 in CFB mode: a storage key's symmetric algorithm.
    private static var aes128CFB: TPMT_SYM_DEF_OBJECT {
        var symmetric = TPMT_SYM_DEF_OBJECT()
        symmetric.algorithm = TPM2_ALG_AES
        symmetric.keyBits.aes = 128
        symmetric.mode.aes = TPM2_ALG_CFB
        return symmetric
    }

    /// An RSA-2048 storage key's parameters: AES-128-CFB, no scheme, the default exponent.
    private static var rsaStorage: TPMS_RSA_PARMS {
        var rsa = TPMS_RSA_PARMS()
        rsa.symmetric = aes128CFB
        rsa.scheme.scheme = TPM2_ALG_NULL
        rsa.keyBits = 2048
        return rsa
    }

    /// A P-256 signing key's parameters, its scheme left to the caller: no symmetric algorithm, no KDF.
    private static var eccSigning: TPMS_ECC_PARMS {
        var ecc = TPMS_ECC_PARMS()
        ecc.symmetric.algorithm = TPM2_ALG_NULL
        ecc.scheme.scheme = TPM2_ALG_NULL
        ecc.curveID = TPM2_ECC_NIST_P256
        ecc.kdf.scheme = TPM2_ALG_NULL
        return ecc
    }
}
