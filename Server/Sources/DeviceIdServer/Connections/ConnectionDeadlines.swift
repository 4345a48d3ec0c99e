import NIOCore
import NIOHTTPTypes
import Prometheus

/// Closes a connection whose client is too slow: no request started within `idle` of the connection opening or of
/// the last answer (half a request head included), or a request whose head came but whose end did not within `read`.
/// A request being answered is never cut off. Each close is counted in ``Refusals`` (`idle_timeout`,
/// `read_timeout`), so one client holding connections open costs each of them at most one of these times, and a
/// graceful stop never waits on it for longer.
package final class ConnectionDeadlines: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    private let idle: TimeAmount, read: TimeAmount
    private let refusals: Refusals
    private var deadline: Scheduled<Void>?

    /// Deadlines of `idle` and `read`, closes counted in `metrics`.
    package init(idle: TimeAmount, read: TimeAmount, metrics: PrometheusCollectorRegistry) {
        self.idle = idle
        self.read = read
        refusals = Refusals(registry: metrics)
    }

    package func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context, after: idle, reason: "idle_timeout") }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    package func channelActive(context: ChannelHandlerContext) {
        arm(context, after: idle, reason: "idle_timeout")
        context.fireChannelActive()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: arm(context, after: read, reason: "read_timeout")
        case .end: disarm()   // answering now: no deadline until the answer is written
        case .body: break
        }
        context.fireChannelRead(data)
    }

    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { arm(context, after: idle, reason: "idle_timeout") }
        context.write(data, promise: promise)
    }

    private func arm(_ context: ChannelHandlerContext, after time: TimeAmount, reason: String) {
        deadline?.cancel()
        let refusals = refusals
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: time) {
            refusals.count(reason)
            context.close(promise: nil)
        }
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }
}
