import CLibSecret

extension SecretServiceConnection {
    /// The prompt at `path`, as a call answered it.
    func prompt(_ path: String) -> PromptInterface { PromptInterface(connection: self, path: path) }
}

/// `org.freedesktop.Secret.Prompt`: a prompt a call answered with, run to its end on our own connection: `Prompt`,
/// then its `Completed` signal, the provider leaving the bus, or the call's deadline or cancellation — whichever
/// comes first. A prompt given up on is dismissed, so it changes nothing later.
///
/// Unlike libsecret's prompt, this never waits past the call's time, even when the provider dies mid-prompt
/// (measured: KeePassXC 2.7.4 can crash under concurrent writes, and a libsecret prompt then waits forever).
struct PromptInterface {
    let connection: SecretServiceConnection
    let path: String

    /// The prompt's result (`nil` when it was dismissed), checked to be of `type` when one is given. Unref it when done.
    /// D-Bus: `Prompt.Prompt`, then the `Prompt.Completed` signal; `Prompt.Dismiss` when giving up.
    func run(returning type: String?, _ call: KeyringCall) throws -> OpaquePointer? {
        let (gdbus, owner) = (connection.gdbus, connection.owner)
        call.armDeadline()
        let context = g_main_context_new()!
        g_main_context_push_thread_default(context)
        defer {
            g_main_context_pop_thread_default(context)
            g_main_context_unref(context)
        }
        let outcome = Unmanaged.passRetained(PromptOutcome())
        defer { outcome.release() }
        // Signals are delivered to the context current when subscribing: ours, iterated below.
        let completed = g_dbus_connection_signal_subscribe(
            gdbus, owner, SecretServiceNames.Interface.prompt, "Completed", path, nil, G_DBUS_SIGNAL_FLAGS_NONE,
            { _, _, _, _, _, parameters, box in
                guard let parameters, let box else { return }
                Unmanaged<PromptOutcome>.fromOpaque(box).takeUnretainedValue().complete(with: parameters)
            }, outcome.toOpaque(), nil)
        defer {
            g_dbus_connection_signal_unsubscribe(gdbus, completed)
            // Deliveries already queued hold the context: let them run (they find the outcome decided).
            while g_main_context_iteration(context, 0) != 0 {}
        }
        let vanished = g_dbus_connection_signal_subscribe(
            gdbus, BusDaemon.name, BusDaemon.interface, "NameOwnerChanged", BusDaemon.path, owner,
            G_DBUS_SIGNAL_FLAGS_NONE,
            { _, _, _, _, _, _, box in
                guard let box else { return }
                Unmanaged<PromptOutcome>.fromOpaque(box).takeUnretainedValue().providerLeft()
            }, outcome.toOpaque(), nil)
        defer { g_dbus_connection_signal_unsubscribe(gdbus, vanished) }
        // The deadline and the caller cancel the cancellable: let that wake the loop.
        let wake = CancellationWake(call.cancellable, context: context)
        defer { wake.stop() }

        var arguments: [OpaquePointer?] = [g_variant_new_string("")]
        do {
            g_variant_unref(try connection.callMethod(
                "Prompt", on: path, interface: SecretServiceNames.Interface.prompt, g_variant_new_tuple(&arguments, 1), returning: "()", call))
        } catch {
            dismiss()
            throw error
        }
        while outcome.takeUnretainedValue().isWaiting, g_cancellable_is_cancelled(call.cancellable) == 0 {
            g_main_context_iteration(context, 1)
        }
        switch outcome.takeUnretainedValue().state {
        case .waiting:
            // Out of time, or the caller cancelled: take the prompt back, then report why.
            dismiss()
            throw call.cancellationError
        case .providerLeft:
            throw KeyringError.serviceUnavailable("the Secret Service left the bus while a prompt was open")
        case .malformed:
            dismiss()
            throw KeyringError.invalidItemData("a prompt completed with a malformed signal")
        case .dismissed:
            return nil
        case .completed(let result):
            guard type.map({ String(cString: g_variant_get_type_string(result.pointer)) == $0 }) ?? true else {
                throw KeyringError.invalidItemData("a prompt completed with an unexpected result type")
            }
            return g_variant_ref(result.pointer)
        }
    }

    /// Dismisses the prompt (`Prompt.Dismiss`) without waiting for the answer (the provider may be the reason we gave
    /// up).
    func dismiss() {
        g_dbus_connection_call(
            connection.gdbus, connection.owner, path, SecretServiceNames.Interface.prompt, "Dismiss", nil, nil, G_DBUS_CALL_FLAGS_NO_AUTO_START,
            -1, nil, nil, nil)
    }
}

/// What a prompt came to; written by signal callbacks on the thread iterating the prompt's context.
private final class PromptOutcome: @unchecked Sendable {
    // Touched only on the thread that runs the prompt (its callbacks run in that thread's iteration).
    enum State {
        case waiting
        case dismissed
        case completed(Result)
        case providerLeft
        case malformed
    }

    /// A GVariant this outcome holds a reference to.
    final class Result {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = g_variant_ref(pointer) }
        deinit { g_variant_unref(pointer) }
    }

    private(set) var state = State.waiting

    var isWaiting: Bool {
        if case .waiting = state { return true }
        return false
    }

    /// `Completed(b dismissed, v result)`.
    func complete(with parameters: OpaquePointer) {
        guard isWaiting else { return }
        guard String(cString: g_variant_get_type_string(parameters)) == "(bv)" else {
            state = .malformed
            return
        }
        let dismissed = g_variant_get_child_value(parameters, 0)!
        defer { g_variant_unref(dismissed) }
        guard g_variant_get_boolean(dismissed) == 0 else {
            state = .dismissed
            return
        }
        let boxed = g_variant_get_child_value(parameters, 1)!
        defer { g_variant_unref(boxed) }
        let result = g_variant_get_variant(boxed)!
        defer { g_variant_unref(result) }
        state = .completed(Result(result))
    }

    /// `NameOwnerChanged` for the provider: it has left the bus.
    func providerLeft() {
        if isWaiting { state = .providerLeft }
    }
}
