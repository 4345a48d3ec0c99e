/// Every check a device-integrity verdict can fail, by its stable code: what a backend reads in a verdict's
/// `reasons`, and what the table of DeviceCheck's article "Device integrity" is generated from
/// (`scripts/integrity-reasons`). Codes are never renamed or reused; a new check gets a new one.
public enum IntegrityReason: String, Sendable, CaseIterable, Codable {
    case evidenceMalformed = "evidence_malformed"
    case nonceUnknown = "nonce_unknown"
    case nonceExpired = "nonce_expired"
    case attestationKeyUncertified = "attestation_key_uncertified"
    case endorsementUntrusted = "endorsement_untrusted"
    case quoteMalformed = "quote_malformed"
    case quoteNotGenerated = "quote_not_generated"
    case notAQuote = "not_a_quote"
    case quoteSigner = "quote_signer"
    case quoteSignature = "quote_signature"
    case nonceMismatch = "nonce_mismatch"
    case pcrSelection = "pcr_selection"
    case pcrValues = "pcr_values"
    case logMalformed = "log_malformed"
    case logBankMissing = "log_bank_missing"
    case logDoesNotReplay = "log_does_not_replay"
    case secureBootDigestNotOfData = "secure_boot_digest_not_of_data"
    case secureBootUnexpectedEvent = "secure_boot_unexpected_event"
    case secureBootUnexpectedVariable = "secure_boot_unexpected_variable"
    case secureBootVariableAfterSeparator = "secure_boot_variable_after_separator"
    case secureBootDuplicateVariable = "secure_boot_duplicate_variable"
    case secureBootMalformedEvent = "secure_boot_malformed_event"
    case secureBootMalformedVariable = "secure_boot_malformed_variable"
    case secureBootMissingVariable = "secure_boot_missing_variable"
    case secureBootNoSeparator = "secure_boot_no_separator"
    case secureBootFirmwareError = "secure_boot_firmware_error"
    case secureBootDebugMode = "secure_boot_debug_mode"
    case secureBootDisabled = "secure_boot_disabled"
    case platformKeyMissing = "platform_key_missing"
    case signatureDatabaseEmpty = "signature_database_empty"
    case referenceStateUnset = "reference_state_unset"
    case bootAuthorityNotAllowed = "boot_authority_not_allowed"
    case forbiddenDatabaseOutdated = "forbidden_database_outdated"

    /// The label a failure of this check withholds: BASIC's checks withhold every label.
    public var withholds: IntegrityLabel {
        switch self {
        case .evidenceMalformed, .nonceUnknown, .nonceExpired, .attestationKeyUncertified, .endorsementUntrusted, .quoteMalformed,
             .quoteNotGenerated, .notAQuote, .quoteSigner, .quoteSignature, .nonceMismatch, .pcrSelection, .pcrValues, .logMalformed,
             .logBankMissing, .logDoesNotReplay:
            .basic
        case .secureBootDigestNotOfData, .secureBootUnexpectedEvent, .secureBootUnexpectedVariable, .secureBootVariableAfterSeparator,
             .secureBootDuplicateVariable, .secureBootMalformedEvent, .secureBootMalformedVariable, .secureBootMissingVariable,
             .secureBootNoSeparator, .secureBootFirmwareError, .secureBootDebugMode, .secureBootDisabled, .platformKeyMissing,
             .signatureDatabaseEmpty:
            .device
        case .referenceStateUnset, .bootAuthorityNotAllowed, .forbiddenDatabaseOutdated:
            .strong
        }
    }

    /// What the check found, for the documentation's table and a verdict's `detail`-less readers.
    public var summary: String {
        switch self {
        case .evidenceMalformed: "The evidence does not open with the server's key, or is not integrity evidence."
        case .nonceUnknown: "The nonce is not one this server issued to the team, or it was used already."
        case .nonceExpired: "The nonce was issued more than five minutes ago."
        case .attestationKeyUncertified: "The quote's attestation key was never certified for the team (enroll the identity first)."
        case .endorsementUntrusted: "The TPM's endorsement certificate is not from a maker the server trusts, or is not the attestation key's TPM's."
        case .quoteMalformed: "The quote is not a TPM structure."
        case .quoteNotGenerated: "The quote does not start with the TPM's magic (`TPM_GENERATED`): a TPM did not make it."
        case .notAQuote: "The signed structure is not a quote (`TPM_ST_ATTEST_QUOTE`)."
        case .quoteSigner: "The quote names another signer than the attestation key."
        case .quoteSignature: "The attestation key's signature of the quote does not verify."
        case .nonceMismatch: "The quote was made over another nonce."
        case .pcrSelection: "The quote does not cover exactly SHA-256 PCRs 0 to 7."
        case .pcrValues: "The PCR values sent do not hash to the quote's digest."
        case .logMalformed: "The event log cannot be read."
        case .logBankMissing: "The event log carries no SHA-256 digests (a SHA-1-only log)."
        case .logDoesNotReplay: "The event log does not replay to the quoted PCRs: the detail names the first event that breaks it."
        case .secureBootDigestNotOfData: "A PCR 7 event's digest is not of its data."
        case .secureBootUnexpectedEvent: "PCR 7 holds an event of a type that has no place there."
        case .secureBootUnexpectedVariable: "PCR 7 measures a variable that has no place there, or with the wrong vendor."
        case .secureBootVariableAfterSeparator: "A Secure Boot variable is measured after PCR 7's separator."
        case .secureBootDuplicateVariable: "A Secure Boot variable is measured twice."
        case .secureBootMalformedEvent: "A PCR 7 variable event does not hold a UEFI variable."
        case .secureBootMalformedVariable: "A Secure Boot variable's value is malformed (a zero-length SecureBoot among them)."
        case .secureBootMissingVariable: "One of SecureBoot, PK, KEK, db and dbx is not measured."
        case .secureBootNoSeparator: "PCR 7 has no separator."
        case .secureBootFirmwareError: "PCR 7's separator records a firmware error."
        case .secureBootDebugMode: "The firmware ran in debug mode."
        case .secureBootDisabled: "Secure Boot is off."
        case .platformKeyMissing: "No platform key is enrolled: the firmware is in setup mode."
        case .signatureDatabaseEmpty: "The signature database (db) is empty."
        case .referenceStateUnset: "The server's policy sets no reference state, so no verdict is STRONG."
        case .bootAuthorityNotAllowed: "An authority that verified a boot application is not one the policy allows."
        case .forbiddenDatabaseOutdated: "The forbidden signature database (dbx) lacks an entry the policy requires."
        }
    }
}

/// What a verdict says a device meets, as Play Integrity's labels name it.
public enum IntegrityLabel: String, Sendable, CaseIterable, Codable, Comparable {
    /// A TPM whose maker the server trusts, a fresh quote by an attestation key it certified, a log that replays.
    case basic = "MEETS_BASIC_INTEGRITY"
    /// BASIC, and Secure Boot on with a platform key and a non-empty db, not in debug mode, on a TPM not marked virtual.
    case device = "MEETS_DEVICE_INTEGRITY"
    /// DEVICE, and the operator's reference state: every boot authority allowed, dbx at least as new as required.
    case strong = "MEETS_STRONG_INTEGRITY"
    /// What DEVICE says, on a TPM whose endorsement CA the operator marks virtual (instead of DEVICE and STRONG).
    case virtual = "MEETS_VIRTUAL_INTEGRITY"

    private var order: Int { Self.allCases.firstIndex(of: self)! }

    /// Labels sort as they are listed.
    public static func < (left: Self, right: Self) -> Bool { left.order < right.order }
}
