import Logging
import ServiceLifecycle

extension BitStore {
    /// Runs `body` while the store runs, as the server runs it (a `Service` in a `ServiceGroup`), then shuts it down
    /// gracefully, letting work in flight finish: for a command or a test that uses a store outside a server.
    package func whileRunning<Value>(_ body: (Self) async throws -> Value) async throws -> Value {
        let services = ServiceGroup(configuration: .init(services: [self], logger: Logger(label: "deviceid-server.store")))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            let value: Value
            do {
                value = try await body(self)
            } catch {
                await services.triggerGracefulShutdown()
                try? await group.waitForAll()
                throw error
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return value
        }
    }
}
