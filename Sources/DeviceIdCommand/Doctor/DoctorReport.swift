import DeviceCheck

/// `deviceid doctor`'s text: a heading per part, one screen for a person.
struct DoctorReport {
    /// The most items listed; the rest are counted.
    static let itemsShown = 8

    private var lines: [String] = []

    init(_ diagnosis: Diagnosis) {
        add("Access group", diagnosis.accessGroup)
        let place = diagnosis.place
        add("Items kept in", place.keyringFile.map { "the keyring file \($0) (\(place.reason))" }
            ?? "the Secret Service on the session bus (\(place.reason))")
        if let sealed = place.sealedPassword {
            add("Sealed with", "this machine's TPM, in \(sealed.path): " + (sealed.problem.map { "does not unseal: \($0)" }
                ?? (sealed.exists == true ? "unseals" : "none yet; the first write seals a new password")))
        }
        if place.keyringFile == nil {
            if let provider = diagnosis.provider {
                let name = [provider.product ?? "an unknown provider", provider.version].compactMap { $0 }.joined(separator: " ")
                let process = [provider.executable, provider.processID.map { "pid \($0)" }, provider.busName].compactMap { $0 }
                add("Provider", "\(name): \(process.joined(separator: ", "))")
            } else {
                add("Provider", "none owns org.freedesktop.secrets")
            }
            if diagnosis.collections.isEmpty {
                add("Collections", diagnosis.serviceProblem.map { "not listed: \($0)" } ?? "none")
            }
            for (index, collection) in diagnosis.collections.enumerated() {
                let label = collection.label.isEmpty ? "" : " \"\(collection.label)\""
                let state = (collection.locked ? "locked" : "unlocked") + (collection.isDefault ? ", default" : "")
                add(index == 0 ? "Collections" : "", "\(collection.name)\(label): \(state)")
            }
        }
        add("Secret portal", diagnosis.portal.version.map { "answers (version \($0))" }
            ?? "does not answer" + because(diagnosis.portal.problem, diagnosis))
        let tpm = diagnosis.tpm
        let way = tpm.tcti.map { "TPM2OPENSSL_TCTI=\($0)" } ?? tpm.device.map { "\($0), \(tpm.deviceAccess ?? "")" }
        add("TPM", (tpm.reachable ? "usable" + (way.map { " through \($0)" } ?? "") : "not usable: \(tpm.problem ?? "")"))
        add("Attestation", tpm.pinnedAttestationKey.map { "sealed to the key pinned in \($0.file): \($0.key)" }
            ?? tpm.pinProblem.map { "not made: \($0)" }
            ?? "sealed to the key each app gives (none pinned in \(PinnedAttestationKey.files.joined(separator: " or ")))")
        if let items = diagnosis.items {
            add("Items", "\(items.count) in '\(diagnosis.accessGroup)' (labels and accounts; never a secret)")
            for item in items.prefix(Self.itemsShown) {
                add("", "\(item.label): account \(item.account), in \(item.collection)\(item.locked ? ", locked" : "")")
            }
            if items.count > Self.itemsShown { add("", "… and \(items.count - Self.itemsShown) more") }
        } else {
            add("Items", "not listed" + because(diagnosis.itemsProblem, diagnosis))
        }
        let identity = diagnosis.identity
        switch identity.state {
        case .present:
            add("Identity", "\(identity.id ?? "") (\(identity.keyType ?? "legacy") key in the \(identity.keyProtection ?? "keyring"), "
                + (identity.encrypted ? "encrypted)" : "not encrypted)"))
        case .absent:
            add("Identity", "none yet: `deviceid id` creates one")
        case .unreadable:
            add("Identity", "not read")
        }
        lines.append("")
        if diagnosis.problems.isEmpty {
            lines.append(identity.state == .present ? "OK: the identity reads here." : "OK: `deviceid id` can create the identity here.")
        }
        for problem in diagnosis.problems {
            lines.append("Problem (exit \(problem.exitCode)): \(problem.message)")
        }
    }

    /// `problem` as a clause, unless it is the Secret Service's, said once already.
    private func because(_ problem: String?, _ diagnosis: Diagnosis) -> String {
        guard let problem else { return "" }
        return problem == diagnosis.serviceProblem ? " (the same failure)" : ": \(problem)"
    }

    /// The report, each line ending in a newline.
    var text: String { lines.map { $0 + "\n" }.joined() }

    private mutating func add(_ heading: String, _ text: String) {
        lines.append(heading + String(repeating: " ", count: max(1, 15 - heading.count)) + text)
    }
}
