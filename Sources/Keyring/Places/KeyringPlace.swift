/// Where a client keeps its items, and why: the one answer, decided here from the bus the client was given,
/// `SECRET_BACKEND`, the sandbox and its permissions, the mark of a move (``SandboxDetection``) and the
/// ``KeyringFallback``; and what keeps the items, opened: the Secret Service's sessions on the client's bus and the
/// process's keyring file. The client hands each call to the place's backend; the moves, the inspection API and
/// `doctor` read it. A move into the keyring file changes the answer for every client of the process at once.
package struct KeyringPlace: Sendable {
    /// What keeps the items.
    package enum Keeper: Sendable, Hashable {
        /// The Secret Service on the client's bus.
        case secretService
        /// The keyring file (``KeyringPlace/keyringFilePath``), its key from `key`.
        case keyringFile(key: KeyringFileKey)
        /// The Secret Service on the session bus while one answers and keeps items beyond the session; else the keyring
        /// file, its key from `key`: the password sealed to the TPM, unless a test password is set
        /// (``KeyringFallback/sealedKeyringFile``). Each call finds which.
        case secretServiceElseKeyringFile(key: KeyringFileKey)
    }

    /// What keeps the items.
    package let keeper: Keeper
    /// What decided, in a few words.
    package let reason: String
    /// What keeps the items, opened.
    private let opened: Opened

    /// What a client's place keeps items with, opened once per client: the Secret Service's sessions on its bus, and
    /// the process's keyring file.
    struct Opened: Sendable {
        let sessions: SessionKeeper
        let file: KeyringFile

        /// What a client of `bus` whose secrets travel by `transport` keeps items with.
        init(bus: BusAddress, transport: SecretTransport) {
            (sessions, file) = (.shared(bus, transport: transport), SandboxDetection.keyringFile)
        }

        /// Closes this process's connections to `bus` (see ``KeyringClient/closeConnections(to:)``).
        static func close(_ bus: BusAddress) {
            SessionKeeper.forget(bus)
        }
    }

    /// The process's keyring file, which the place keeps items in when ``keeper`` says so, and moves them into.
    var file: KeyringFile { opened.file }

    /// The place of a client of `bus` with `fallback`, which keeps items with `opened`, in this process now. Every call
    /// of a client asks: the sandbox decision is read only for the session bus.
    init(bus: BusAddress, fallback: KeyringFallback, opened: Opened) {
        self.init(bus: bus, fallback: fallback, choice: SandboxDetection.choice, fileKey: SandboxDetection.keyringFile.key, opened: opened)
    }

    /// The place of a client of `bus` with `fallback`, in a process whose sandbox decision is `choice` and whose keyring
    /// file's key comes from `fileKey`.
    package init(
        bus: BusAddress, fallback: KeyringFallback, choice: @autoclosure () -> SandboxDetection.Choice,
        fileKey: @autoclosure () -> KeyringFileKey
    ) {
        self.init(bus: bus, fallback: fallback, choice: choice(), fileKey: fileKey(), opened: Opened(bus: bus, transport: .plain))
    }

    private init(
        bus: BusAddress, fallback: KeyringFallback, choice: @autoclosure () -> SandboxDetection.Choice,
        fileKey: @autoclosure () -> KeyringFileKey, opened: Opened
    ) {
        self.opened = opened
        guard bus == .session else {
            (keeper, reason) = (.secretService, "the client was given an explicit bus address")
            return
        }
        let choice = choice()
        reason = choice.reason
        keeper = choice.usesKeyringFile ? .keyringFile(key: fileKey())
            : fallback == .sealedKeyringFile ? .secretServiceElseKeyringFile(key: fileKey()) : .secretService
    }

    /// The keyring file this place keeps items in, or `nil` when it is the Secret Service (or may be, under the fallback).
    package var keyringFilePath: String? {
        guard case .keyringFile = keeper else { return nil }
        return file.path
    }

    /// The password sealed to the TPM that this place's keyring file uses, or will once it is used: `nil` where it uses
    /// no keyring file, or one whose key libsecret finds itself.
    package var sealedPasswordPath: String? {
        switch keeper {
        case .keyringFile(.sealedToTPM), .secretServiceElseKeyringFile(.sealedToTPM):
            SealedKeyringPassword.path(keyringPath: file.path)
        default: nil
        }
    }

    /// The backend that keeps the items, for one call made with `context`. The two backends are built side by side;
    /// the keyring file's asks the Secret Service, before it creates an item, whether the app's items are still there
    /// (``SecretServiceBackend/refuseIfNotMoved(_:)``).
    func backend(_ context: KeyringCallContext) -> any KeyringBackend {
        let service = secretService(context)
        return switch keeper {
        case .secretService: service
        case .keyringFile: file(context, asking: service)
        case .secretServiceElseKeyringFile: FallbackBackend(service: service, file: file(context, asking: service))
        }
    }

    /// Where the fallback would keep the items of a call made with `context` (``FallbackDecision``); `nil` where the
    /// place has no fallback.
    func fallback(_ context: KeyringCallContext) -> FallbackDecision? {
        guard case .secretServiceElseKeyringFile = keeper else { return nil }
        let service = secretService(context)
        return FallbackDecision(service: service, file: file(context, asking: service))
    }

    /// The Secret Service on the client's bus, for one call made with `context`.
    func secretService(_ context: KeyringCallContext) -> SecretServiceBackend {
        SecretServiceBackend(context, sessions: opened.sessions)
    }

    /// The keyring file, for one call made with `context`: built only where the place uses it (a read from the Secret
    /// Service, the steady state, makes none), asking `service` before it creates an item.
    private func file(_ context: KeyringCallContext, asking service: SecretServiceBackend) -> KeyringFileBackend {
        KeyringFileBackend(file, context, beforeCreating: service.refuseIfNotMoved)
    }
}
