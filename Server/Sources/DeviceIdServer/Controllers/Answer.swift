import Foundation
import Hummingbird
import NIOCore

/// The answers the endpoints give: plain text, as Apple's API words its answers, or JSON encoded from a value.
enum Answer {
    /// `body` as `text/plain`, with `status`.
    static func text(_ status: HTTPResponse.Status, _ body: String) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// `text` as `application/x-pem-file`, `200 OK`.
    static func pem(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/x-pem-file"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// `value` as JSON, its members in a fixed order (sorted), `200 OK`.
    static func json(_ value: some Encodable) throws -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: try encoder.encode(value))))
    }

    /// One encoder for every answer, made once: a query answered is on the server's hot path.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }()
}
