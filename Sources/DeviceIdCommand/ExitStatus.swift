/// The command's exit statuses (after `sysexits.h`), each with what it means: the one table that the help, the man
/// page's EXIT STATUS and the tests read. Every failure maps to one of them (``CommandFailure``).
enum ExitStatus: Int32, CaseIterable {
    case success = 0
    case declined = 1
    case usage = 64
    case dataError = 65
    case noIdentity = 66
    case unavailable = 69
    case software = 70
    case lockDirectory = 73
    case unreadableInput = 74
    case tryAgain = 75

    /// What the status means, in one sentence.
    var meaning: String {
        switch self {
        case .success:
            "success"
        case .declined:
            "delete --all was answered no: nothing was removed"
        case .usage:
            "usage: a bad option, key size, account or application ID, standard input too large or not a terminal to ask on; "
                + "or the identity is stored with encryption and --no-encryption was given, or the reverse; or an App Attest "
                + "key id or client-data hash not in its form, or a certificate to keep that is not the identity's attestation key's"
        case .dataError:
            "the stored identity or a legacy identifier is corrupt or cannot be decrypted, or the TPM refuses a TPM-held key "
                + "made by another TPM (or before it was cleared), or the keyring file is damaged or holds items written under "
                + "another key, or its password sealed to the TPM is missing, not one, or sealed by another TPM (or before it was "
                + "cleared), or the host keyring still holds the identity the sandbox should have moved; "
                + "it is left as it is. Also a challenge on the standard input of activate-credential that is not one, or an "
                + "App Attest key that is not in the group or whose signature counter is gone, damaged or spent"
        case .noIdentity:
            "no identity in the group (info, public-key, sign without --create); nothing was created"
        case .unavailable:
            "no Secret Service, no session bus, no default keyring, or no encrypted transport; or no usable TPM (none, not "
                + "yours to open: join the tss group, its OpenSSL provider missing, or unreachable), or a token that must carry "
                + "the TPM's attestation cannot; or, in a Flatpak or Snap sandbox, the Secret portal gave no key for the app's "
                + "keyring file, or outside one the TPM its password is sealed to cannot be used; or an App Attest attestation "
                + "before the identity's attestation key was certified (app-attest enroll, then keep-certificate); or "
                + "integrity evidence without a readable event log (the kernel's is root's: the package's boot unit copies it)"
        case .software:
            "internal error, an OpenSSL failure included"
        case .lockDirectory:
            "the creation lock's directory is not private to you (owner, mode or a symbolic link); or the keyring file or "
                + "its folder cannot be reached: read-only, not yours, not a folder, or the disk is full"
        case .unreadableInput:
            "an input cannot be read: standard input, a legacy identifier file"
        case .tryAgain:
            "the keyring is locked, the prompt was dismissed, the command timed out, another program kept writing, or the "
                + "TPM is in dictionary-attack lockout: try again later"
        }
    }

    /// The table as the help shows it: a line per status.
    static var table: String {
        allCases.map { "\($0.rawValue)  \($0.meaning)" }.joined(separator: "\n")
    }
}
