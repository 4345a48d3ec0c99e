import CTSS2

extension TSSContext {
    /// `body`'s result, given a policy session that satisfies the endorsement key's policy (PolicySecret of the
    /// endorsement hierarchy) for one command; the session is flushed afterwards.
    func withEndorsementSession<Result>(_ body: (ESYS_TR) throws(TPMFailure) -> Result) throws(TPMFailure) -> Result {
        var symmetric = TPMT_SYM_DEF()
        symmetric.algorithm = TPM2_ALG_NULL
        var session = noSession
        try step("Esys_StartAuthSession(policy)") {
            Esys_StartAuthSession($0, noSession, noSession, noSession, noSession, noSession, nil, TPM2_SE_POLICY, &symmetric, TPM2_ALG_SHA256, &session)
        }
        defer { flushSession(session) }
        try step("Esys_PolicySecret(endorsement)") {
            Esys_PolicySecret($0, ESYS_TR(ESYS_TR_RH_ENDORSEMENT), session, passwordSession, noSession, noSession, nil, nil, nil, 0, nil, nil)
        }
        return try body(session)
    }

    /// `body`'s result, given a session that keeps a secret off the TPM's bus: an HMAC session salted to `key` (a
    /// loaded decryption key; only the TPM that holds it learns the salt), so that its session key is unknown to anyone
    /// watching, with AES-128-CFB parameter encryption as `attributes` ask — `TPMA_SESSION_DECRYPT` for a secret in the
    /// command's first parameter, `TPMA_SESSION_ENCRYPT` for one in the response's. As the authorization of an object
    /// whose password is empty it authorizes that object too. Flushed afterwards. A listener on the bus learns nothing;
    /// one that answers in the TPM's place and hands out its own `key` is not stopped.
    func withEncryptingSession<Result>(
        salt key: ESYS_TR, _ attributes: TPMA_SESSION, _ body: (ESYS_TR) throws(TPMFailure) -> Result
    ) throws(TPMFailure) -> Result {
        var symmetric = TPMT_SYM_DEF()
        symmetric.algorithm = TPM2_ALG_AES
        symmetric.keyBits.aes = 128
        symmetric.mode.aes = TPM2_ALG_CFB
        var session = noSession
        try step("Esys_StartAuthSession(salted)") {
            Esys_StartAuthSession($0, key, noSession, noSession, noSession, noSession, nil, TPM2_SE_HMAC, &symmetric, TPM2_ALG_SHA256, &session)
        }
        defer { flushSession(session) }
        let encryption = TPMA_SESSION(TPMA_SESSION_DECRYPT) | TPMA_SESSION(TPMA_SESSION_ENCRYPT)
        try step("Esys_TRSess_SetAttributes") { Esys_TRSess_SetAttributes($0, session, attributes & encryption, encryption) }
        return try body(session)
    }
}
