import ArgumentParser

/// `deviceid doctor`: why the identity can or cannot be read here, in one screen.
struct Doctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Explain whether the identity can be read or created here, and what to fix when it cannot.",
        discussion: """
            Shows where this process keeps items and why (the Secret Service, or a sandbox's keyring file), which program \
            answers for the Secret Service (its executable and version), its collections and whether each is locked, whether \
            the Secret portal answers, whether a TPM can be used, the labels and accounts of the access group's items (never \
            a secret), and the identity. It never prompts and never writes (so --non-interactive changes nothing). \
            Exits 0 when the identity can be read, or created by `deviceid id`; otherwise with the code `deviceid id` \
            would give for the first problem, which it explains.
            """)
    @OptionGroup var identity: IdentityOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let diagnosis = await Diagnosis.make(identity)
        if output.json {
            try Output.printJSON(diagnosis)
        } else {
            print(Output.shownOnTerminal(DoctorReport(diagnosis).text, keepingLines: true), terminator: "")
        }
        if diagnosis.exitCode != 0 { Output.exit(diagnosis.exitCode) }
    }
}
