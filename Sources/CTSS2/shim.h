#ifndef DEVICEID_CTSS2_SHIM_H
#define DEVICEID_CTSS2_SHIM_H

/* The TPM Software Stack's ESAPI, for what OpenSSL's tpm2 provider does not do: endorsement certificates, attestation
 * keys, TPM2_Certify, credential activation, and what carries a secret across the TPM's bus (sealing, ECDH), in
 * encrypting sessions. Templates are C initialisers (Swift cannot write the unions), and each step is one function
 * that marshals its results into the caller's buffers. */

#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_rc.h>

/* Opens an ESAPI context on the TCTI that `conf` names (NULL: the loader's default search, /dev/tpmrm0 first). */
static inline TSS2_RC deviceid_tss_open(const char *conf, ESYS_CONTEXT **esys) {
    TSS2_TCTI_CONTEXT *tcti = NULL;
    TSS2_RC rc = Tss2_TctiLdr_Initialize(conf, &tcti);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = Esys_Initialize(esys, tcti, NULL);
    if (rc != TSS2_RC_SUCCESS) Tss2_TctiLdr_Finalize(&tcti);
    return rc;
}

static inline void deviceid_tss_close(ESYS_CONTEXT *esys) {
    TSS2_TCTI_CONTEXT *tcti = NULL;
    Esys_GetTcti(esys, &tcti);
    Esys_Finalize(&esys);
    if (tcti) Tss2_TctiLdr_Finalize(&tcti);
}

/* The whole of NV index `index` (an endorsement certificate), read in chunks any TPM accepts. */
static inline TSS2_RC deviceid_tss_read_nv(ESYS_CONTEXT *esys, uint32_t index,
                                           uint8_t *out, size_t capacity, size_t *length) {
    ESYS_TR nv = ESYS_TR_NONE;
    TSS2_RC rc = Esys_TR_FromTPMPublic(esys, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nv);
    if (rc != TSS2_RC_SUCCESS) return rc;
    TPM2B_NV_PUBLIC *public = NULL;
    rc = Esys_NV_ReadPublic(esys, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &public, NULL);
    if (rc != TSS2_RC_SUCCESS) { Esys_TR_Close(esys, &nv); return rc; }
    size_t size = public->nvPublic.dataSize;
    Esys_Free(public);
    if (size > capacity) { Esys_TR_Close(esys, &nv); return TSS2_ESYS_RC_INSUFFICIENT_BUFFER; }
    size_t offset = 0;
    while (offset < size) {
        UINT16 chunk = (UINT16)(size - offset > 512 ? 512 : size - offset);
        TPM2B_MAX_NV_BUFFER *data = NULL;
        rc = Esys_NV_Read(esys, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, chunk, (UINT16)offset, &data);
        if (rc != TSS2_RC_SUCCESS) break;
        if (data->size == 0 || data->size > chunk) { Esys_Free(data); rc = TSS2_ESYS_RC_MALFORMED_RESPONSE; break; }
        memcpy(out + offset, data->buffer, data->size);
        offset += data->size;
        Esys_Free(data);
    }
    Esys_TR_Close(esys, &nv);
    *length = offset;
    return rc;
}

static inline TSS2_RC deviceid_tss_create_primary(ESYS_CONTEXT *esys, ESYS_TR hierarchy, const TPM2B_PUBLIC *template,
                                                  ESYS_TR *object, uint8_t *public, size_t capacity, size_t *length) {
    const TPM2B_SENSITIVE_CREATE sensitive = { 0 };
    const TPM2B_DATA outside = { 0 };
    const TPML_PCR_SELECTION pcrs = { 0 };
    TPM2B_PUBLIC *made = NULL;
    TSS2_RC rc = Esys_CreatePrimary(esys, hierarchy, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                    &sensitive, template, &outside, &pcrs, object, &made, NULL, NULL, NULL);
    if (rc != TSS2_RC_SUCCESS) return rc;
    size_t offset = 0;
    if (public) rc = Tss2_MU_TPM2B_PUBLIC_Marshal(made, public, capacity, &offset);
    if (length) *length = offset;
    Esys_Free(made);
    if (rc != TSS2_RC_SUCCESS) Esys_FlushContext(esys, *object);
    return rc;
}

/* The RSA-2048 endorsement key of the TCG EK Credential Profile (template L-1), whose certificate is at NV
 * index 0x01C00002: made again from the endorsement seed, the same key every time. */
static inline TSS2_RC deviceid_tss_create_ek(ESYS_CONTEXT *esys, ESYS_TR *ek, uint8_t *public, size_t capacity, size_t *length) {
    TPM2B_PUBLIC template = { .publicArea = {
        .type = TPM2_ALG_RSA, .nameAlg = TPM2_ALG_SHA256,
        .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                            TPMA_OBJECT_ADMINWITHPOLICY | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT,
        .authPolicy = { .size = 32, .buffer = {   /* PolicySecret(TPM_RH_ENDORSEMENT) */
            0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xB3, 0xF8, 0x1A, 0x90, 0xCC, 0x8D, 0x46, 0xA5, 0xD7, 0x24,
            0xFD, 0x52, 0xD7, 0x6E, 0x06, 0x52, 0x0B, 0x64, 0xF2, 0xA1, 0xDA, 0x1B, 0x33, 0x14, 0x69, 0xAA } },
        .parameters.rsaDetail = {
            .symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB },
            .scheme = { .scheme = TPM2_ALG_NULL }, .keyBits = 2048, .exponent = 0 },
        .unique.rsa = { .size = 256 } } };
    return deviceid_tss_create_primary(esys, ESYS_TR_RH_ENDORSEMENT, &template, ek, public, capacity, length);
}

/* An attestation key: a restricted P-256 ECDSA-SHA256 signing key that never leaves the TPM, made again from the
 * owner seed as a primary key (the same key until the TPM is cleared, so nothing needs storing). `unique` (at most
 * 32 bytes) goes into the template's unique.ecc.x, which the key is derived from: each value makes another key. */
static inline TSS2_RC deviceid_tss_create_ak(ESYS_CONTEXT *esys, const uint8_t *unique, size_t uniqueLength,
                                             ESYS_TR *ak, uint8_t *public, size_t capacity, size_t *length) {
    if (uniqueLength > 32) return TSS2_ESYS_RC_BAD_VALUE;
    TPM2B_PUBLIC template = { .publicArea = {
        .type = TPM2_ALG_ECC, .nameAlg = TPM2_ALG_SHA256,
        .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                            TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_NODA,
        .parameters.eccDetail = {
            .symmetric = { .algorithm = TPM2_ALG_NULL },
            .scheme = { .scheme = TPM2_ALG_ECDSA, .details.ecdsa.hashAlg = TPM2_ALG_SHA256 },
            .curveID = TPM2_ECC_NIST_P256, .kdf = { .scheme = TPM2_ALG_NULL } } } };
    template.publicArea.unique.ecc.x.size = (UINT16)uniqueLength;
    if (uniqueLength) memcpy(template.publicArea.unique.ecc.x.buffer, unique, uniqueLength);
    return deviceid_tss_create_primary(esys, ESYS_TR_RH_OWNER, &template, ak, public, capacity, length);
}

/* The storage key OpenSSL's tpm2 provider (1.1) makes keys under when their parent is the owner hierarchy
 * (0x40000001): its own P-256 template, or RSA-2048 on a TPM without ECC. */
static inline TSS2_RC deviceid_tss_create_provider_parent(ESYS_CONTEXT *esys, int rsa, ESYS_TR *parent) {
    TPM2B_PUBLIC template = { .publicArea = {
        .type = rsa ? TPM2_ALG_RSA : TPM2_ALG_ECC, .nameAlg = TPM2_ALG_SHA256,
        .objectAttributes = TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_NODA |
                            TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN } };
    if (rsa) {
        template.publicArea.parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_AES;
        template.publicArea.parameters.rsaDetail.symmetric.keyBits.aes = 128;
        template.publicArea.parameters.rsaDetail.symmetric.mode.aes = TPM2_ALG_CFB;
        template.publicArea.parameters.rsaDetail.scheme.scheme = TPM2_ALG_NULL;
        template.publicArea.parameters.rsaDetail.keyBits = 2048;
    } else {
        template.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
        template.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128;
        template.publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
        template.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
        template.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
        template.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
    }
    return deviceid_tss_create_primary(esys, ESYS_TR_RH_OWNER, &template, parent, NULL, 0, NULL);
}

/* Loads a key the provider wrapped (`TSS2 PRIVATE KEY`'s pubkey and privkey: a marshaled TPM2B_PUBLIC and
 * TPM2B_PRIVATE) under `parent`; `public`/`private` are the marshaled bytes. */
static inline TSS2_RC deviceid_tss_load(ESYS_CONTEXT *esys, ESYS_TR parent, const uint8_t *public, size_t publicLength,
                                        const uint8_t *private, size_t privateLength, ESYS_TR *key) {
    TPM2B_PUBLIC inPublic = { 0 };
    TPM2B_PRIVATE inPrivate = { 0 };
    size_t offset = 0;
    TSS2_RC rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(public, publicLength, &offset, &inPublic);
    if (rc != TSS2_RC_SUCCESS) return rc;
    offset = 0;
    rc = Tss2_MU_TPM2B_PRIVATE_Unmarshal(private, privateLength, &offset, &inPrivate);
    if (rc != TSS2_RC_SUCCESS) return rc;
    return Esys_Load(esys, parent, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &inPrivate, &inPublic, key);
}

/* TPM2_Certify: `ak` signs that `key` is loaded in this TPM, over `nonce`. `attest` receives the TPMS_ATTEST bytes
 * that were signed, `signature` the marshaled TPMT_SIGNATURE. */
static inline TSS2_RC deviceid_tss_certify(ESYS_CONTEXT *esys, ESYS_TR key, ESYS_TR ak, const uint8_t *nonce, size_t nonceLength,
                                           uint8_t *attest, size_t attestCapacity, size_t *attestLength,
                                           uint8_t *signature, size_t signatureCapacity, size_t *signatureLength) {
    TPM2B_DATA qualifying = { 0 };
    if (nonceLength > sizeof(qualifying.buffer)) return TSS2_ESYS_RC_BAD_VALUE;
    qualifying.size = (UINT16)nonceLength;
    memcpy(qualifying.buffer, nonce, nonceLength);
    const TPMT_SIG_SCHEME scheme = { .scheme = TPM2_ALG_NULL };
    TPM2B_ATTEST *info = NULL;
    TPMT_SIGNATURE *signed_ = NULL;
    TSS2_RC rc = Esys_Certify(esys, key, ak, ESYS_TR_PASSWORD, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                              &qualifying, &scheme, &info, &signed_);
    if (rc != TSS2_RC_SUCCESS) return rc;
    if (info->size > attestCapacity) rc = TSS2_ESYS_RC_INSUFFICIENT_BUFFER;
    else { memcpy(attest, info->attestationData, info->size); *attestLength = info->size; }
    size_t offset = 0;
    if (rc == TSS2_RC_SUCCESS) rc = Tss2_MU_TPMT_SIGNATURE_Marshal(signed_, signature, signatureCapacity, &offset);
    *signatureLength = offset;
    Esys_Free(info);
    Esys_Free(signed_);
    return rc;
}

/* A policy session that satisfies the endorsement key's policy (PolicySecret of the endorsement hierarchy), for one
 * command that uses the key; the TPM ends it after that command, the caller flushes it when the command fails. */
static inline TSS2_RC deviceid_tss_endorsement_session(ESYS_CONTEXT *esys, ESYS_TR *session) {
    const TPMT_SYM_DEF symmetric = { .algorithm = TPM2_ALG_NULL };
    *session = ESYS_TR_NONE;
    TSS2_RC rc = Esys_StartAuthSession(esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                       NULL, TPM2_SE_POLICY, &symmetric, TPM2_ALG_SHA256, session);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = Esys_PolicySecret(esys, ESYS_TR_RH_ENDORSEMENT, *session, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                           NULL, NULL, NULL, 0, NULL, NULL);
    if (rc != TSS2_RC_SUCCESS) { Esys_FlushContext(esys, *session); *session = ESYS_TR_NONE; }
    return rc;
}

/* The endorsement key's witness: a P-256 signing key made under `ek` and loaded there, certified by `ak` over `nonce`.
 * The certification carries the witness's qualified name, which hashes the name of its parent, so a verifier learns
 * the template of the endorsement key that holds the certificate's private key. `public` receives the witness's
 * TPM2B_PUBLIC, `attest` and `signature` the certification as deviceid_tss_certify gives it. */
static inline TSS2_RC deviceid_tss_endorsement_witness(ESYS_CONTEXT *esys, ESYS_TR ek, ESYS_TR ak, const uint8_t *nonce, size_t nonceLength,
                                                       uint8_t *public, size_t publicCapacity, size_t *publicLength,
                                                       uint8_t *attest, size_t attestCapacity, size_t *attestLength,
                                                       uint8_t *signature, size_t signatureCapacity, size_t *signatureLength) {
    const TPM2B_PUBLIC template = { .publicArea = {
        .type = TPM2_ALG_ECC, .nameAlg = TPM2_ALG_SHA256,
        .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN |
                            TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_NODA,
        .parameters.eccDetail = {
            .symmetric = { .algorithm = TPM2_ALG_NULL }, .scheme = { .scheme = TPM2_ALG_NULL },
            .curveID = TPM2_ECC_NIST_P256, .kdf = { .scheme = TPM2_ALG_NULL } } } };
    const TPM2B_SENSITIVE_CREATE sensitive = { 0 };
    const TPM2B_DATA outside = { 0 };
    const TPML_PCR_SELECTION pcrs = { 0 };
    TPM2B_PRIVATE *private = NULL;
    TPM2B_PUBLIC *made = NULL;
    ESYS_TR session = ESYS_TR_NONE, witness = ESYS_TR_NONE;
    TSS2_RC rc = deviceid_tss_endorsement_session(esys, &session);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = Esys_Create(esys, ek, session, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template, &outside, &pcrs,
                     &private, &made, NULL, NULL, NULL);
    Esys_FlushContext(esys, session);
    if (rc == TSS2_RC_SUCCESS) rc = deviceid_tss_endorsement_session(esys, &session);
    if (rc == TSS2_RC_SUCCESS) {
        rc = Esys_Load(esys, ek, session, ESYS_TR_NONE, ESYS_TR_NONE, private, made, &witness);
        Esys_FlushContext(esys, session);
    }
    size_t offset = 0;
    if (rc == TSS2_RC_SUCCESS) rc = Tss2_MU_TPM2B_PUBLIC_Marshal(made, public, publicCapacity, &offset);
    *publicLength = offset;
    if (rc == TSS2_RC_SUCCESS)
        rc = deviceid_tss_certify(esys, witness, ak, nonce, nonceLength, attest, attestCapacity, attestLength,
                                  signature, signatureCapacity, signatureLength);
    if (witness != ESYS_TR_NONE) Esys_FlushContext(esys, witness);
    Esys_Free(private);
    Esys_Free(made);
    return rc;
}

/* A session that keeps a secret off the TPM's bus: an HMAC session salted to `key` (a loaded decryption key; only
 * the TPM that holds it learns the salt), so its session key is unknown to anyone watching, with AES-128-CFB parameter
 * encryption as `attributes` ask: TPMA_SESSION_DECRYPT for a secret in the command's first parameter,
 * TPMA_SESSION_ENCRYPT for one in the response's. As the authorization of an object whose password is empty it
 * authorizes that object too. The caller flushes it. A listener on the bus learns nothing; one that answers in the
 * TPM's place and hands out its own `key` is not stopped. */
static inline TSS2_RC deviceid_tss_encrypting_session(ESYS_CONTEXT *esys, ESYS_TR key, TPMA_SESSION attributes, ESYS_TR *session) {
    const TPMT_SYM_DEF symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB };
    *session = ESYS_TR_NONE;
    TSS2_RC rc = Esys_StartAuthSession(esys, key, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                       NULL, TPM2_SE_HMAC, &symmetric, TPM2_ALG_SHA256, session);
    if (rc != TSS2_RC_SUCCESS) return rc;
    const TPMA_SESSION encryption = TPMA_SESSION_DECRYPT | TPMA_SESSION_ENCRYPT;
    rc = Esys_TRSess_SetAttributes(esys, *session, attributes & encryption, encryption);
    if (rc != TSS2_RC_SUCCESS) { Esys_FlushContext(esys, *session); *session = ESYS_TR_NONE; }
    return rc;
}

/* Copies the `size` secret bytes a TSS structure holds in `buffer` (`bufferSize` bytes in all) to `out` (`capacity`
 * bytes), then wipes the whole buffer; the caller frees the structure. */
static inline TSS2_RC deviceid_tss_copy_wiping(uint8_t *buffer, size_t bufferSize, size_t size,
                                               uint8_t *out, size_t capacity, size_t *length) {
    TSS2_RC rc = TSS2_RC_SUCCESS;
    if (size > capacity || size > bufferSize) rc = TSS2_ESYS_RC_INSUFFICIENT_BUFFER;
    else { memcpy(out, buffer, size); *length = size; }
    memset(buffer, 0, bufferSize);
    return rc;
}

/* TPM2_ActivateCredential: the secret a verifier sealed to `ek` for the key named like `ak`, released only if both
 * are loaded in this TPM. The endorsement key's policy is satisfied in a policy session of its own; the secret comes
 * back encrypted in a third session, salted to `ek`. `secret` receives the credential; the caller wipes it. */
static inline TSS2_RC deviceid_tss_activate(ESYS_CONTEXT *esys, ESYS_TR ak, ESYS_TR ek,
                                            const uint8_t *blob, size_t blobLength, const uint8_t *encrypted, size_t encryptedLength,
                                            uint8_t *secret, size_t capacity, size_t *length) {
    TPM2B_ID_OBJECT credential = { 0 };
    TPM2B_ENCRYPTED_SECRET seed = { 0 };
    size_t offset = 0;
    TSS2_RC rc = Tss2_MU_TPM2B_ID_OBJECT_Unmarshal(blob, blobLength, &offset, &credential);
    if (rc != TSS2_RC_SUCCESS) return rc;
    offset = 0;
    rc = Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(encrypted, encryptedLength, &offset, &seed);
    if (rc != TSS2_RC_SUCCESS) return rc;
    ESYS_TR session = ESYS_TR_NONE, encrypting = ESYS_TR_NONE;
    rc = deviceid_tss_encrypting_session(esys, ek, TPMA_SESSION_ENCRYPT, &encrypting);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = deviceid_tss_endorsement_session(esys, &session);
    if (rc != TSS2_RC_SUCCESS) { Esys_FlushContext(esys, encrypting); return rc; }
    TPM2B_DIGEST *released = NULL;
    rc = Esys_ActivateCredential(esys, ak, ek, ESYS_TR_PASSWORD, session, encrypting, &credential, &seed, &released);
    Esys_FlushContext(esys, session);
    Esys_FlushContext(esys, encrypting);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = deviceid_tss_copy_wiping(released->buffer, sizeof(released->buffer), released->size, secret, capacity, length);
    Esys_Free(released);
    return rc;
}

/* The point of an ECC key's marshaled TPM2B_PUBLIC: `x` and `y` receive its coordinates (each at most `capacity` bytes). */
static inline TSS2_RC deviceid_tss_ecc_point(const uint8_t *public, size_t publicLength, uint8_t *x, uint8_t *y, size_t capacity,
                                             size_t *xLength, size_t *yLength) {
    TPM2B_PUBLIC key = { 0 };
    size_t offset = 0;
    TSS2_RC rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(public, publicLength, &offset, &key);
    if (rc != TSS2_RC_SUCCESS) return rc;
    const TPMS_ECC_POINT *point = &key.publicArea.unique.ecc;
    if (key.publicArea.type != TPM2_ALG_ECC || point->x.size > capacity || point->y.size > capacity) return TSS2_ESYS_RC_BAD_VALUE;
    memcpy(x, point->x.buffer, point->x.size);
    memcpy(y, point->y.buffer, point->y.size);
    *xLength = point->x.size;
    *yLength = point->y.size;
    return TSS2_RC_SUCCESS;
}

/* TPM2_ECDH_ZGen: the x coordinate of `key`'s private scalar times the point (`x`, `y`), an ECDH shared secret, which
 * comes back encrypted, in a session salted to `salt`. `secret` receives it; the caller wipes it. */
static inline TSS2_RC deviceid_tss_ecdh(ESYS_CONTEXT *esys, ESYS_TR key, ESYS_TR salt, const uint8_t *x, const uint8_t *y,
                                        size_t coordinateLength, uint8_t *secret, size_t capacity, size_t *length) {
    TPM2B_ECC_POINT peer = { 0 };
    if (coordinateLength > sizeof(peer.point.x.buffer)) return TSS2_ESYS_RC_BAD_VALUE;
    peer.point.x.size = peer.point.y.size = (UINT16)coordinateLength;
    memcpy(peer.point.x.buffer, x, coordinateLength);
    memcpy(peer.point.y.buffer, y, coordinateLength);
    ESYS_TR session = ESYS_TR_NONE;
    TSS2_RC rc = deviceid_tss_encrypting_session(esys, salt, TPMA_SESSION_ENCRYPT, &session);
    if (rc != TSS2_RC_SUCCESS) return rc;
    TPM2B_ECC_POINT *shared = NULL;
    rc = Esys_ECDH_ZGen(esys, key, session, ESYS_TR_NONE, ESYS_TR_NONE, &peer, &shared);
    Esys_FlushContext(esys, session);
    if (rc != TSS2_RC_SUCCESS) return rc;
    memset(shared->point.y.buffer, 0, sizeof(shared->point.y.buffer));
    rc = deviceid_tss_copy_wiping(shared->point.x.buffer, sizeof(shared->point.x.buffer), shared->point.x.size, secret, capacity, length);
    Esys_Free(shared);
    return rc;
}

/* libsecret's keyring file (egg/egg-tpm2.c) seals its password under this primary key, made again from the owner
 * seed each time: an RSA-2048 storage key of its own template. The same template makes the same key, so what one
 * seals the other unseals. */
static inline TSS2_RC deviceid_tss_create_keyring_parent(ESYS_CONTEXT *esys, ESYS_TR *parent) {
    const TPM2B_PUBLIC template = { .publicArea = {
        .type = TPM2_ALG_RSA, .nameAlg = TPM2_ALG_SHA256,
        .objectAttributes = TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT |
                            TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN,
        .parameters.rsaDetail = {
            .symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB },
            .scheme = { .scheme = TPM2_ALG_NULL }, .keyBits = 2048, .exponent = 0 } } };
    return deviceid_tss_create_primary(esys, ESYS_TR_RH_OWNER, &template, parent, NULL, 0, NULL);
}

/* Seals `data` under `parent` as libsecret's keyring file does: a keyed-hash data object with no scheme and an empty
 * password. The data crosses the bus encrypted, in a session salted to `parent`. `private` and `public` receive the
 * marshaled TPM2B_PRIVATE and TPM2B_PUBLIC. */
static inline TSS2_RC deviceid_tss_seal(ESYS_CONTEXT *esys, ESYS_TR parent, const uint8_t *data, size_t dataLength,
                                        uint8_t *private, size_t privateCapacity, size_t *privateLength,
                                        uint8_t *public, size_t publicCapacity, size_t *publicLength) {
    TPM2B_SENSITIVE_CREATE sensitive = { 0 };
    if (dataLength > sizeof(sensitive.sensitive.data.buffer)) return TSS2_ESYS_RC_BAD_VALUE;
    memcpy(sensitive.sensitive.data.buffer, data, dataLength);
    sensitive.sensitive.data.size = (UINT16)dataLength;
    const TPM2B_PUBLIC template = { .publicArea = {
        .type = TPM2_ALG_KEYEDHASH, .nameAlg = TPM2_ALG_SHA256,
        .objectAttributes = TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT,
        .parameters.keyedHashDetail.scheme = { .scheme = TPM2_ALG_NULL, .details.hmac.hashAlg = TPM2_ALG_SHA256 } } };
    const TPM2B_DATA outside = { 0 };
    const TPML_PCR_SELECTION pcrs = { 0 };
    TPM2B_PRIVATE *sealed = NULL;
    TPM2B_PUBLIC *made = NULL;
    ESYS_TR session = ESYS_TR_NONE;
    TSS2_RC rc = deviceid_tss_encrypting_session(esys, parent, TPMA_SESSION_DECRYPT, &session);
    if (rc == TSS2_RC_SUCCESS) {
        rc = Esys_Create(esys, parent, session, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template, &outside,
                         &pcrs, &sealed, &made, NULL, NULL, NULL);
        Esys_FlushContext(esys, session);
    }
    memset(&sensitive, 0, sizeof(sensitive));
    if (rc != TSS2_RC_SUCCESS) return rc;
    size_t offset = 0;
    rc = Tss2_MU_TPM2B_PRIVATE_Marshal(sealed, private, privateCapacity, &offset);
    *privateLength = offset;
    offset = 0;
    if (rc == TSS2_RC_SUCCESS) rc = Tss2_MU_TPM2B_PUBLIC_Marshal(made, public, publicCapacity, &offset);
    *publicLength = offset;
    Esys_Free(sealed);
    Esys_Free(made);
    return rc;
}

/* TSS2_RC_SUCCESS when `private` and `public` are exactly one marshaled TPM2B_PRIVATE and one TPM2B_PUBLIC of a data
 * object as deviceid_tss_seal (or libsecret) makes one: a keyed-hash object with no scheme, named with SHA-256. */
static inline TSS2_RC deviceid_tss_check_sealed(const uint8_t *private, size_t privateLength, const uint8_t *public, size_t publicLength) {
    TPM2B_PRIVATE inPrivate = { 0 };
    TPM2B_PUBLIC inPublic = { 0 };
    size_t offset = 0;
    TSS2_RC rc = Tss2_MU_TPM2B_PRIVATE_Unmarshal(private, privateLength, &offset, &inPrivate);
    if (rc != TSS2_RC_SUCCESS) return rc;
    if (offset != privateLength) return TSS2_ESYS_RC_BAD_VALUE;
    offset = 0;
    rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(public, publicLength, &offset, &inPublic);
    if (rc != TSS2_RC_SUCCESS) return rc;
    if (offset != publicLength || inPublic.publicArea.type != TPM2_ALG_KEYEDHASH || inPublic.publicArea.nameAlg != TPM2_ALG_SHA256
        || inPublic.publicArea.parameters.keyedHashDetail.scheme.scheme != TPM2_ALG_NULL) return TSS2_ESYS_RC_BAD_VALUE;
    return TSS2_RC_SUCCESS;
}

/* Unseals what deviceid_tss_seal (or libsecret) sealed under `parent`; the data crosses the bus encrypted, in a session
 * salted to `parent`. `data` receives the sealed bytes; the caller wipes it. */
static inline TSS2_RC deviceid_tss_unseal(ESYS_CONTEXT *esys, ESYS_TR parent, const uint8_t *private, size_t privateLength,
                                          const uint8_t *public, size_t publicLength,
                                          uint8_t *data, size_t capacity, size_t *length) {
    ESYS_TR object = ESYS_TR_NONE;
    TSS2_RC rc = deviceid_tss_load(esys, parent, public, publicLength, private, privateLength, &object);
    if (rc != TSS2_RC_SUCCESS) return rc;
    TPM2B_SENSITIVE_DATA *unsealed = NULL;
    ESYS_TR session = ESYS_TR_NONE;
    rc = deviceid_tss_encrypting_session(esys, parent, TPMA_SESSION_ENCRYPT, &session);
    if (rc == TSS2_RC_SUCCESS) {
        rc = Esys_Unseal(esys, object, session, ESYS_TR_NONE, ESYS_TR_NONE, &unsealed);
        Esys_FlushContext(esys, session);
    }
    Esys_FlushContext(esys, object);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = deviceid_tss_copy_wiping(unsealed->buffer, sizeof(unsealed->buffer), unsealed->size, data, capacity, length);
    Esys_Free(unsealed);
    return rc;
}

#endif
