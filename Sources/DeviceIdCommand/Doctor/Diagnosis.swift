import Threading
import DeviceId
import FoundationEssentials
import Keyring
import Logging
import SecureStorage

/// What `deviceid doctor` found: each part of the way from this process to the identity, and the problems that block it.
/// It is `deviceid doctor --json`'s object.
struct Diagnosis: Encodable {
    /// Where items are kept.
    enum Backend: String, Encodable {
        case secretService = "secret-service", keyringFile = "keyring-file"
    }

    /// Where this process keeps items, and why.
    struct Place: Encodable {
        var backend: Backend
        /// What decided.
        var reason: String
        /// `flatpak`, `snap`, or `nil` outside a sandbox.
        var sandbox: String?
        /// The keyring file, when items are kept there.
        var keyringFile: String?
        /// The keyring file's password sealed to the TPM, when the file is used outside a sandbox (or may be, under the
        /// fallback).
        var sealedPassword: SealedPassword?
    }

    /// The keyring file's password, sealed to this machine's TPM beside the file.
    struct SealedPassword: Encodable {
        var path: String
        /// Whether one is sealed yet (the first write seals one); `nil` when the TPM could not be asked.
        var exists: Bool?
        /// Why the TPM does not unseal it, when it does not.
        var problem: String?
    }

    /// The program that answers for the Secret Service.
    struct Provider: Encodable {
        var busName: String
        var processID: Int32?
        var executable: String?
        /// GNOME Keyring, KeePassXC, KWallet, oo7…
        var product: String?
        /// The installed package's version, when the package database knows the executable.
        var version: String?
    }

    /// A collection, as the Secret Service lists it.
    struct Collection: Encodable {
        var name: String
        var label: String
        var locked: Bool
        var isDefault: Bool
    }

    /// Whether the Secret portal answers: it hands a sandboxed app the key to its keyring file.
    struct Portal: Encodable {
        var version: Int?
        var problem: String?
    }

    /// An item of the access group: what describes it, never its secret.
    struct Item: Encodable {
        var label: String
        var account: String
        var collection: String
        var locked: Bool
    }

    /// Whether the identity is there.
    enum IdentityState: String, Encodable {
        /// Read.
        case present
        /// The keyring definitely holds none.
        case absent
        /// Not read: see the problems.
        case unreadable
    }

    /// The identity the options describe.
    struct Identity: Encodable {
        var state: IdentityState
        var id: String?
        var keyType: String?
        var keyProtection: String?
        var encrypted: Bool
    }

    /// Something that keeps the identity from being read or created here, what to do about it, and the exit code
    /// `deviceid id` would give.
    struct Problem: Encodable {
        var message: String
        var exitCode: Int32
    }

    var accessGroup: String
    var place: Place
    var provider: Provider?
    /// Why the Secret Service could not be asked, when it could not.
    var serviceProblem: String?
    var collections: [Collection] = []
    var portal: Portal
    var tpm: TPMReport
    var items: [Item]?
    var itemsProblem: String?
    var identity: Identity
    var problems: [Problem] = []

    /// 0 when the identity can be read or created here; else the first problem's exit code.
    var exitCode: Int32 { problems.first?.exitCode ?? 0 }
}

extension Diagnosis {
    /// Asks every part in turn, never prompting and never writing, all within `--timeout` (each step gets what is left
    /// of it). Once the Secret Service has not answered in time, it is asked nothing more; once the time is up, nothing
    /// is, and a diagnosis that could not reach the identity says so (exit 75).
    static func make(_ options: IdentityOptions) async -> Diagnosis {
        // Every step is bounded by what is left of the command's time.
        await options.keyringOptions.within { deadline in await make(options, within: deadline) }
    }

    private static func make(_ options: IdentityOptions, within deadline: Deadline) async -> Diagnosis {
        let configuration = options.configuration
        let group = configuration.accessGroup
        var keyring = KeyringClient(unlockPolicy: .nonInteractive)
        let place = keyring.place
        var reason = place.reason
        var keyringFile = place.keyringFilePath
        if case .secretServiceElseKeyringFile = place.keeper {
            // Under the fallback, where a call would go now; a Secret Service that answers is asked without it, so that
            // the doctor moves nothing out of the file.
            let fallback = "\(KeyringFallback.environmentVariable)=\(keyring.fallback.rawValue)"
            if let found = try? await keyring.fallbackFile() {
                reason = "\(fallback), and \(found.reason)"
                keyringFile = found.path
            } else {
                reason = "\(reason); \(fallback), not used: the Secret Service answers, or fails in a way that may pass"
                keyring = KeyringClient(unlockPolicy: .nonInteractive, fallback: .none)
            }
        }
        let context = CommandFailure.Context(
            accessGroup: group, account: configuration.keychainAccount, nonInteractive: true, keyringFile: keyringFile)

        var diagnosis = Diagnosis(
            accessGroup: group.rawValue,
            place: Place(backend: keyringFile == nil ? .secretService : .keyringFile, reason: reason,
                         sandbox: Sandbox.current()?.rawValue, keyringFile: keyringFile),
            portal: Portal(), tpm: TPMReport(),
            identity: Identity(state: .unreadable, encrypted: configuration.useEncryption))
        await diagnosis.lookUpSealedPassword(keyring, at: keyring.place.sealedPasswordPath, context: context)
        var serviceAnswers = true
        if keyringFile == nil {
            // Who owns the name now (asking starts nobody); then the collections, which start a provider D-Bus can
            // start, as any client's first call would; then who owns it, if nobody did before.
            await diagnosis.lookUpProvider(keyring)
            do {
                diagnosis.collections = try await keyring.collections().map {
                    Collection(name: $0.name, label: $0.label, locked: $0.isLocked, isDefault: $0.isDefault)
                }
                if diagnosis.provider == nil { await diagnosis.lookUpProvider(keyring) }
            } catch {
                diagnosis.serviceProblem = String(describing: error)
                diagnosis.problems.append(Problem(CommandFailure(error, context: context)))
                serviceAnswers = !Self.gaveUp(error)
            }
        }
        if serviceAnswers && !deadline.hasPassed {
            do {
                diagnosis.items = try await keyring.items(matching: group.attributes).map {
                    Item(label: $0.label, account: $0.attributes[KeyringSchema.accountAttribute] ?? "", collection: $0.collection,
                         locked: $0.isLocked)
                }
            } catch {
                diagnosis.itemsProblem = String(describing: error)
            }
        }
        var absent = false
        // Whether the identity's read already failed because the keyring file cannot be reached.
        var fileUnreachable = false
        if serviceAnswers && !deadline.hasPassed {
            do {
                let identifier = try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring, logger: Logger(label: DeviceIdCommand.name))
                let identity = try await identifier.existingIdentity()
                diagnosis.identity = Identity(
                    state: .present, id: identity.id, keyType: identity.publicKey?.keyType.rawValue,
                    keyProtection: identity.keyProtection.rawValue, encrypted: configuration.useEncryption)
            } catch DeviceIdentifierError.keychainItemNotFound {
                diagnosis.identity.state = .absent
                absent = true
            } catch {
                if case .keyringFileInaccessible = CommandFailure.keyringError(in: error) { fileUnreachable = true }
                if diagnosis.problems.isEmpty { diagnosis.problems.append(Problem(error, context: context)) }
            }
        } else if diagnosis.problems.isEmpty {
            diagnosis.problems.append(Problem(CommandFailure(deadline.timedOut, context: context)))
        }
        // Reads may work where no write can: the identity could be neither made, replaced nor deleted.
        if !fileUnreachable, let problem = keyring.keyringFileProblem {
            diagnosis.problems.append(Problem(CommandFailure(problem, context: context)))
        }
        let notAsked = "not asked: --timeout ran out before"
        if !deadline.hasPassed {
            do {
                diagnosis.portal.version = try await keyring.secretPortalVersion()
            } catch KeyringError.portalUnavailable(let detail) {
                diagnosis.portal.problem = detail
            } catch {
                diagnosis.portal.problem = String(describing: error)
            }
        } else {
            diagnosis.portal.problem = notAsked
        }
        diagnosis.tpm = !deadline.hasPassed ? await TPMReport.look(timeout: deadline.remaining) : TPMReport(problem: notAsked, failure: .tpm(.notAnswering(within: deadline.timeout)))
        if absent { diagnosis.problems += diagnosis.creationProblems(configuration) }
        return diagnosis
    }

    /// Fills the sealed password in, where the keyring file outside a sandbox is used: whether the TPM unseals it. A
    /// password that does not unseal is the first problem where the file is the place.
    private mutating func lookUpSealedPassword(_ keyring: KeyringClient, at path: String?, context: CommandFailure.Context) async {
        guard let path else { return }
        do {
            place.sealedPassword = SealedPassword(path: path, exists: try await keyring.sealedPasswordExists())
        } catch {
            place.sealedPassword = SealedPassword(path: path, problem: String(describing: error))
            if place.keyringFile != nil { problems.append(Problem(error, context: context)) }
        }
    }

    /// Fills ``provider`` in with the program that owns `org.freedesktop.secrets` now, if any, and its package's version.
    private mutating func lookUpProvider(_ keyring: KeyringClient) async {
        guard let found = try? await keyring.provider() else { return }
        var version: String?
        if let executable = found.executable {
            version = try? await WorkerThreads.run { ProviderProgram.packageVersion(of: executable) }
        }
        provider = Provider(
            busName: found.busName, processID: found.processID, executable: found.executable,
            product: found.executable.flatMap(ProviderProgram.product(of:)), version: version)
    }

    /// What would keep `deviceid id` from creating the identity, which is absent.
    private func creationProblems(_ configuration: DeviceIdentifierConfiguration) -> [Problem] {
        var problems: [Problem] = []
        if place.keyringFile == nil {
            if let target = collections.first(where: \.isDefault) {
                if target.locked { problems.append(Problem(locked: target.name)) }
            } else {
                problems.append(Problem(CommandFailure(KeyringError.noDefaultCollection(alias: KeyringCollection.default.alias))))
            }
        }
        if configuration.keyProtection == .tpm, let problem = tpm.problem, let failure = tpm.failure {
            problems.append(Problem(message: problem, exitCode: CommandFailure.status(for: failure).rawValue))
        }
        return problems
    }

    /// Whether `error` means the Secret Service did not answer in time: asking it more would only wait again.
    private static func gaveUp(_ error: any Error) -> Bool {
        if case .timedOut = error as? KeyringError { return true }
        return false
    }
}

extension Diagnosis.Problem {
    /// The problem a failure is, in the command's words.
    init(_ failure: CommandFailure) {
        self.init(message: failure.message, exitCode: failure.exitCode)
    }

    /// The problem `error` is; a locked keyring is said as `doctor` says it (it never prompts).
    init(_ error: any Error, context: CommandFailure.Context) {
        if case .locked(let collection) = CommandFailure.keyringError(in: error) {
            self.init(locked: collection)
        } else {
            self.init(CommandFailure(error, context: context))
        }
    }

    /// A locked collection.
    init(locked collection: String?) {
        self.init(
            message: "the keyring\(collection.map { " '\($0)'" } ?? "") is locked: unlock it (log in again, or open your keyring's "
                + "manager: Seahorse, KeePassXC, KWallet), or run `deviceid id`, which asks for its password",
            exitCode: CommandFailure.status(for: KeyringError.locked(collection: collection)).rawValue)
    }
}
