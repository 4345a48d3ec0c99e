import DeviceVerifier
import Foundation

/// The JSON file `Fixtures/NAME.json` of `bundle` (a test target's `Bundle.module`), decoded.
public func fixture<T: Decodable>(_ name: String, in bundle: Bundle) throws -> T {
    guard let url = bundle.url(forResource: name, withExtension: "json", subdirectory: "Fixtures") else {
        throw CocoaError(.fileNoSuchFile)
    }
    return try JSONDecoder().decode(T.self, from: Data(contentsOf: url))
}

/// The bytes hexadecimal text of a reference vector writes.
public func hexData(_ hex: String) -> Data { Data(hexString: hex)! }
