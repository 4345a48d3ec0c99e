import Foundation
import Hummingbird

/// Apple's DeviceCheck endpoints: `POST /v1/validate_device_token`, `/v1/query_two_bits` and `/v1/update_two_bits`,
/// with Apple's request fields, answers and error texts. While the server trusts TPM makers, a device key bound to
/// its TPM is validated and queried with `"hardware_bound":true` (a binding is as good as the makers it was checked
/// against).
struct BitsController: Sendable {
    let store: DeviceBitStore
    /// Whether the server trusts TPM makers, so a binding counts.
    let trustsTPMs: Bool

    func addRoutes(to routes: some RouterMethods<BasicRequestContext>, through endpoints: DeviceEndpoints) {
        endpoints.post("validate_device_token", on: routes, answer: validate)
        endpoints.post("query_two_bits", on: routes, answer: query)
        endpoints.post("update_two_bits", on: routes, answer: update)
    }

    @Sendable private func validate(_ call: DeviceCall) async throws -> Response {
        guard trustsTPMs, try await store.record(team: call.team.id, device: call.device).hardwareBound else { return Answer.text(.ok, "") }
        return try Answer.json(Validation(hardwareBound: true))
    }

    @Sendable private func query(_ call: DeviceCall) async throws -> Response {
        let record = try await store.record(team: call.team.id, device: call.device)
        guard let bits = record.bits else { return Answer.text(.ok, "Bit State Not Found") }
        return try Answer.json(Bits(
            bit0: bits.bit0, bit1: bits.bit1, hardwareBound: trustsTPMs && record.hardwareBound ? true : nil,
            lastUpdateTime: Self.month(of: bits.updated)))
    }

    @Sendable private func update(_ call: DeviceCall) async throws -> Response {
        let fields = call.request.fields
        guard !fields.badBits, fields.bit0 != nil || fields.bit1 != nil else { throw DeviceRequest.Refusal.bits }
        try await store.update(team: call.team.id, device: call.device, bit0: fields.bit0, bit1: fields.bit1, at: call.now)
        return Answer.text(.ok, "")
    }

    /// A validation's answer for a hardware-bound key.
    private struct Validation: Encodable {
        let hardwareBound: Bool
    }

    /// A query's answer: the bits and the month (`yyyy-MM`, UTC) of their last update, the time itself never.
    private struct Bits: Encodable {
        let bit0: Bool, bit1: Bool
        let hardwareBound: Bool?
        let lastUpdateTime: String
    }

    /// `date`'s month, `yyyy-MM` in UTC.
    private static func month(of date: Date) -> String {
        let month = utc.dateComponents([.year, .month], from: date)
        return String(format: "%04d-%02d", month.year ?? 0, month.month ?? 0)
    }

    /// The Gregorian calendar in UTC, made once.
    private static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        return calendar
    }()
}
