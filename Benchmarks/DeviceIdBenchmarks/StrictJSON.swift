import DeviceCheck
import Foundation

/// `StrictJSON.check` of a request body as deviceid-server reads one (a kilobyte of device token among four fields),
/// against `JSONDecoder` decoding the same body, which the check guards and every request pays as well.
func benchmarkStrictJSON(_ report: inout Report, iterations: Int) async throws {
    struct Fields: Decodable {
        let device_token: String, transaction_id: String, timestamp: Int, bit0: Bool
    }
    let token = Data((0..<760).map { UInt8(truncatingIfNeeded: $0 &* 37) }).base64EncodedString()
    let body = Data(#"{"device_token":"\#(token)","transaction_id":"\#(UUID().uuidString)","timestamp":1764000000000,"bit0":true}"#.utf8)
    let check = try await Samples(iterations) { try StrictJSON.check(body) }.median
    let decode = try await Samples(iterations) { _ = try JSONDecoder().decode(Fields.self, from: body) }.median
    report.add(Row(name: "StrictJSON.check of a request body", ours: check, peerName: "JSONDecoder, same body", peer: decode, unit: "µs",
                   target: .atMost(1)))
}
