import Foundation

/// The verifiers backends run, on what App Attest makes (`Fixtures/webauthn-verify.py`): pyattest (App Attest's Python
/// verifier) and py_webauthn (WebAuthn's `apple` format), in the virtual environment `scripts/py-webauthn` makes: the one `DEVICEID_TEST_PYWEBAUTHN` names (`scripts/test` sets it),
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

    /// What the verifier said of one assertion or attestation.
    public struct Verdict: Decodable, Sendable {
        public let accepted: Bool
        public let count: UInt32?
        public let reason: String?
        /// An attestation's format and its authenticator's AAGUID.
        public let fmt: String?
        public let aaguid: String?
    }

    /// An attestation as a relying party receives it when a key is registered.
    public struct Registration: Encodable, Sendable {
        let rp_id: String
        let origin: String
        let root: String
        let id: String
        let client_data_json: String
        let attestation_object: String
        let challenge: String
        let production: Bool

        /// Apple's attestation object `attestationObject` of the key `keyID` (base64) for the App ID `rpID`, with its
        /// client data (JSON, whose `challenge` and `origin` are `challenge`, base64url, and `origin`), checked for
        /// the production environment or not, with only `rootPEM` trusted.
        public init(
            keyID: String, attestationObject: Data, clientDataJSON: Data, challenge: String, origin: String, rpID: String, rootPEM: String,
            production: Bool = false
        ) {
            (rp_id, self.origin, root, id, self.challenge, self.production) = (rpID, origin, rootPEM, keyID, challenge, production)
            client_data_json = clientDataJSON.base64EncodedString()
            attestation_object = attestationObject.base64EncodedString()
        }
    }

    /// pyattest's attestation check on `registration`, then py_webauthn's `verify_registration_response` of the same
    /// certificate in WebAuthn's `apple` format.
    public static func verifyRegistration(_ registration: Registration) async throws -> Verdict {
        struct Request: Encodable { let registration: Registration }
        struct Response: Decodable { let registration: Verdict }
        return try JSONDecoder().decode(Response.self, from: try await verify(Request(registration: registration))).registration
    }

    /// pyattest's assertion check on `assertions` in order, with a backend's App ID and counter checks, for `rpID` and the key
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
        return try JSONDecoder().decode(Response.self, from: try await verify(request)).assertions
    }

    /// What `webauthn-verify.py` answers `request`.
    private static func verify(_ request: some Encodable) async throws -> Data {
        let output = try await ChildProcess.run(
            try await python(), [verifier], environment: ProcessInfo.processInfo.environment, input: try JSONEncoder().encode(request))
        guard output.status == 0 else { throw Failed(detail: "webauthn-verify.py exited \(output.status): \(output.errorText)") }
        return output.stdout
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
