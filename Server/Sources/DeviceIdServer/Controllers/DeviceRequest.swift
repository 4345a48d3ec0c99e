import DeviceVerifier
import Foundation

/// A request to one of the device endpoints, read from its body: the fields, and the device token they carry,
/// verified — what every endpoint checks before it looks at the store.
package struct DeviceRequest: Sendable {
    /// The body's fields.
    package let fields: Fields
    /// The device token, verified for the team that sent the request.
    package let checked: CheckedToken

    /// Reads `body`, sent by `team` at `now`, verifying its device token through `tokens`; throws the refusal of the
    /// first field that is missing or wrong. A body that is not one JSON object passing ``StrictJSON`` (no member
    /// named twice) is refused whole.
    package init(body: Data, team: String, now: Date, tokens: VerifiedTokens) throws(Refusal) {
        guard (try? StrictJSON.check(body)) != nil, let fields = try? JSONDecoder().decode(Fields.self, from: body) else { throw .body }
        guard let encoded = fields.deviceToken else { throw .token(.missing) }
        checked = try tokens.verify(encoded, team: team, now: now)
        guard fields.transactionID != nil else { throw .transaction }
        guard fields.timestamp != nil else { throw .timestamp }
        self.fields = fields
    }

    /// A refusal: its answer, as Apple words it, and the reason it is counted under.
    package enum Refusal: RequestRefusal, Equatable {
        /// The body is not one strict JSON object.
        case body
        /// The device token is missing or refused.
        case token(TokenProblem)
        case bits, timestamp, transaction, attestation, credential
        /// The TPM's manufacturer, model or version is missing or not in the TCG's form.
        case tpmDescription

        /// The answer's text.
        package var text: String {
            switch self {
            case .body, .token: "Missing or incorrectly formatted device token payload"
            case .bits: "Missing or incorrectly formatted bits"
            case .timestamp: "Missing or incorrectly formatted time stamp"
            case .transaction: "Missing or incorrectly formatted transaction id"
            case .attestation: "Missing or incorrectly formatted TPM attestation"
            case .credential: "Incorrect or expired credential"
            case .tpmDescription: "Missing or incorrectly formatted TPM manufacturer, model or version"
            }
        }

        /// The label of the refusal in the server's metrics.
        package var reason: String {
            switch self {
            case .token(let problem): "token_" + problem.rawValue
            case .tpmDescription: "tpm_description"
            default: String(describing: self)
            }
        }
    }

    /// Why a device token was refused.
    package enum TokenProblem: String, Sendable {
        case missing, malformed, signature, wrongTeam = "wrong_team", expired, attestation

        init(_ error: DeviceTokenError) {
            switch error {
            case .malformed: self = .malformed
            case .badSignature: self = .signature
            case .wrongTeam: self = .wrongTeam
            case .expired: self = .expired
            }
        }
    }

    /// A request body's fields, each read on its own: a field of the wrong type is absent (or, for the bits, noted),
    /// so the refusal names the field that is wrong.
    package struct Fields: Decodable, Sendable {
        package var deviceToken: String?, transactionID: String?, timestamp: Int64?, bit0: Bool?, bit1: Bool?, credential: String?
        package var tpmManufacturer: String?, tpmModel: String?, tpmVersion: String?
        package var badBits = false

        private enum Keys: String, CodingKey {
            case deviceToken = "device_token", transactionID = "transaction_id", timestamp, bit0, bit1, credential
            case tpmManufacturer = "tpm_manufacturer", tpmModel = "tpm_model", tpmVersion = "tpm_version"
        }

        package init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: Keys.self)
            deviceToken = try? fields.decodeIfPresent(String.self, forKey: .deviceToken)
            transactionID = try? fields.decodeIfPresent(String.self, forKey: .transactionID)
            timestamp = try? fields.decodeIfPresent(Int64.self, forKey: .timestamp)
            credential = try? fields.decodeIfPresent(String.self, forKey: .credential)
            tpmManufacturer = try? fields.decodeIfPresent(String.self, forKey: .tpmManufacturer)
            tpmModel = try? fields.decodeIfPresent(String.self, forKey: .tpmModel)
            tpmVersion = try? fields.decodeIfPresent(String.self, forKey: .tpmVersion)
            do {
                bit0 = try fields.decodeIfPresent(Bool.self, forKey: .bit0)
                bit1 = try fields.decodeIfPresent(Bool.self, forKey: .bit1)
            } catch {
                badBits = true
            }
        }
    }
}
