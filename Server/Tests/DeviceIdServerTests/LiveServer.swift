import Hummingbird
import DeviceIdTestSupport
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOPosix
import NIOSSL
import ServiceLifecycle

extension ApplicationProtocol {
    /// Runs the application on a loopback port of its own, as `serve` runs it (its services, the steps before it
    /// starts, its HTTP or TLS server), hands `body` a client of it, and stops it gracefully when `body` returns.
    /// `trusting` is the certificate a TLS client trusts (the server's, issued for `localhost`).
    func test<Value>(trusting certificate: NIOSSLCertificate? = nil, _ body: (TestClient) async throws -> Value) async throws -> Value {
        let (ports, announce) = AsyncStream.makeStream(of: Int.self)
        let running = ServiceGroup(configuration: .init(services: [OnLoopback(base: self, announce: announce)], logger: logger))
        let tls = try certificate.map { certificate in
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.trustRoots = .certificates([certificate])
            return try NIOSSLContext(configuration: configuration)
        }
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { announce.finish() }   // a server that never started ends the wait for its port
                try await running.run()
            }
            var next = ports.makeAsyncIterator()
            guard let port = await next.next() else {
                try await tasks.waitForAll()   // the server's failure
                throw TestClient.Failure.serverStopped
            }
            let value: Value
            do {
                value = try await body(TestClient(port: port, tls: tls))
            } catch {
                // Stopped as on success, never cancelled: a server cancelled while it accepts a connection traps
                // in SwiftNIO (NIOAsyncWriter's deinit).
                await running.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
            await running.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return value
        }
    }
}

/// An application as its tests run it: on 127.0.0.1, on a port the system picks, which it announces once listening.
private struct OnLoopback<Base: ApplicationProtocol>: ApplicationProtocol {
    let base: Base
    let announce: AsyncStream<Int>.Continuation

    var responder: Base.Responder { get async throws { try await base.responder } }
    var server: HTTPServerBuilder { base.server }
    var eventLoopGroup: any EventLoopGroup { base.eventLoopGroup }
    var configuration: ApplicationConfiguration {
        var configuration = base.configuration
        configuration.address = .hostname("127.0.0.1", port: 0)
        return configuration
    }
    var logger: Logger { base.logger }
    var services: [any Service] { base.services }
    var processesRunBeforeServerStart: [@Sendable () async throws -> Void] { base.processesRunBeforeServerStart }

    @Sendable func onServerRunning(_ channel: any Channel) async {
        await base.onServerRunning(channel)
        if let port = channel.localAddress?.port { announce.yield(port) }
    }
}

/// A client of one running test server, sending each request on a connection of its own (over TLS when the server
/// speaks it), reading the whole answer; at most ``maximumConnections`` at once, as a client's connection pool keeps
/// them (a thousand concurrent requests would otherwise hold two thousand descriptors in this one process).
struct TestClient: Sendable {
    /// The server's port on 127.0.0.1.
    let port: Int
    fileprivate let tls: NIOSSLContext?
    private let connections = Slots(maximumConnections)

    /// The most connections one client keeps open at once.
    static let maximumConnections = 64

    fileprivate init(port: Int, tls: NIOSSLContext?) {
        self.port = port
        self.tls = tls
    }

    /// What a request got back.
    struct Response: Sendable {
        let status: HTTPResponse.Status
        let body: ByteBuffer
    }

    enum Failure: Error {
        /// The server stopped before it listened.
        case serverStopped
        /// The connection closed before the whole answer came.
        case closedEarly
    }

    /// Sends `method uri` with `headers` and `body`, and returns what `read` makes of the answer.
    func execute<Value>(
        uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil, _ read: (Response) throws -> Value
    ) async throws -> Value {
        try read(try await connections.withSlot { try await send(uri: uri, method: method, headers: headers, body: body) })
    }

    /// One request on a connection of its own, and the whole answer.
    private func send(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> Response {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                let pipeline = channel.pipeline.syncOperations
                if let tls { try pipeline.addHandler(NIOSSLClientHandler(context: tls, serverHostname: "localhost")) }
                try pipeline.addHTTPClientHandlers()
                try pipeline.addHandler(HTTP1ToHTTPClientCodec())
                return try NIOAsyncChannel<HTTPResponsePart, HTTPRequestPart>(wrappingChannelSynchronously: channel)
            }
        }
        var request = HTTPRequest(method: method, scheme: nil, authority: "localhost", path: uri, headerFields: headers)
        request.headerFields[.contentLength] = String(body?.readableBytes ?? 0)
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(.head(request))
            if let body { try await outbound.write(.body(body)) }
            try await outbound.write(.end(nil))
            var status: HTTPResponse.Status?
            var collected = ByteBuffer()
            for try await part in inbound {
                switch part {
                case .head(let head): status = head.status
                case .body(var chunk): collected.writeBuffer(&chunk)
                case .end:
                    if let status { return Response(status: status, body: collected) }
                }
            }
            throw Failure.closedEarly
        }
    }
}
