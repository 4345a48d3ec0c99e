import Foundation

/// py_webauthn, a stock WebAuthn verifier, run on what App Attest makes (`Fixtures/webauthn-verify.py`), in the
/// virtual environment `scripts/py-webauthn` makes: the one `DEVICEID_TEST_PYWEBAUTHN` names (`scripts/test` sets it),
/// else made now in the user's cache.
public enum PyWebAuthn {
    /// One assertion as a relying party receives it.
    public struct Assertion: Encodable, Sendable {
        let id: String
        let authenticator_data: String
        let signature: String
        let client_data_json: String
        let challenge: String
        let origin: String

        /// An assertion of the key `keyID` (base64), with its client data (JSON, whose `challenge` and `origin` are
        /// `challenge`, base64url, and `origin`).
        public init(keyID: String, authenticatorData: Data, signature: Data, clientDataJSON: Data, challenge: String, origin: String) {
            id = keyID
            authenticator_data = authenticatorData.base64EncodedString()
            self.signature = signature.base64EncodedString()
            client_data_json = clientDataJSON.base64EncodedString()
            self.challenge = challenge
            self.origin = origin
        }
    }

    /// What the verifier said of one assertion.
    public struct Verdict: Decodable, Sendable {
        public let accepted: Bool
        public let count: UInt32?
        public let reason: String?
    }

    /// py_webauthn's `verify_authentication_response` on `assertions` in order, for relying party `rpID` and the key
    /// `publicKey` (COSE), starting from the counter `count`.
    public static func verifyAssertions(_ assertions: [Assertion], rpID: String, publicKey: Data, count: UInt32 = 0) async throws -> [Verdict] {
        struct Request: Encodable {
            struct Assertions: Encodable {
                let rp_id: String
                let public_key: String
                let count: UInt32
                let items: [Assertion]
            }
            let assertions: Assertions
        }
        struct Response: Decodable { let assertions: [Verdict] }
        let request = Request(assertions: .init(rp_id: rpID, public_key: publicKey.base64EncodedString(), count: count, items: assertions))
        let output = try await ChildProcess.run(
            try await python(), [verifier], environment: ProcessInfo.processInfo.environment, input: try JSONEncoder().encode(request))
        guard output.status == 0 else { throw Failed(detail: "webauthn-verify.py exited \(output.status): \(output.errorText)") }
        return try JSONDecoder().decode(Response.self, from: output.stdout).assertions
    }

    private static let verifier = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/webauthn-verify.py").path

    /// The virtual environment's python.
    private static func python() async throws -> String {
        if let python = ProcessInfo.processInfo.environment["DEVICEID_TEST_PYWEBAUTHN"], !python.isEmpty { return python }
        let cache = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/swift-deviceid").path
        let made = try await ChildProcess.run(script("py-webauthn"), [cache], environment: ProcessInfo.processInfo.environment)
        guard made.status == 0 else { throw Failed(detail: "scripts/py-webauthn exited \(made.status): \(made.errorText)") }
        return made.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A verifier that could not be run.
    struct Failed: Error, CustomStringConvertible {
        let detail: String
        var description: String { detail }
    }
}
