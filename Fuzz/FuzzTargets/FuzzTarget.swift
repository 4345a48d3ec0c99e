import DeviceCheck
import DeviceId
import DeviceVerifier
import Foundation
import FuzzDriver
import Keyring
import OpenSSLSupport
import SecureStorage

/// A decoder of what another process can write — a keyring item, a device token — driven with arbitrary bytes:
/// by libFuzzer through `DeviceIdFuzz` (`scripts/fuzz`), and by the tests through the seed corpus in `Fuzz/Corpus`.
package enum FuzzTarget: String, Fuzzable {
    /// `AESGCMEncryptor` opening an envelope with a fixed key.
    case envelope
    /// `PassphraseKeyProvider` reading the key parameters stored in an envelope.
    case passphraseParameters = "passphrase-parameters"
    /// The stored identity record, decoded and validated as `DefaultDeviceIdentifier` reads it.
    case storedIdentity = "stored-identity"
    /// The FRAuth items (first two bytes: the public key item's length, big-endian; then the key, then the
    /// identifier) and a legacy identifier file (the same bytes, whole).
    case legacy
    /// `DeviceToken.verify`, as a team's backend runs it.
    case deviceToken = "device-token"
    /// `DeviceToken.verify` of a token signed afresh, so that fuzzing reaches past the signature check: the input is
    /// one byte choosing the signer (see ``ResigningKeys``), the header, a 0xFF byte, the payload.
    case signedDeviceToken = "signed-device-token"
    /// WebAuthn's CBOR, read in its one canonical encoding: what it reads, it writes back byte for byte.
    case cbor
    /// `VerifiedAppAttestation`, as deviceid-server checks an App Attest attestation for its risk metric, of an
    /// attestation signed afresh so that fuzzing reaches past the signature check: see ``ResigningKeys/appAttestation(_:clientDataHash:)``.
    case signedAppAttestation = "signed-app-attestation"
    /// `EventLog` reading a measured-boot log, then its replays, breaks and PCRs 0–7 kept, and the Secure Boot state it
    /// records: see ``readEventLog(_:)``.
    case eventLog = "event-log"
    /// `IntegrityVerifier`'s check of a quote (`TPMS_ATTEST`) signed afresh by a fixed attestation key, so that fuzzing
    /// reaches past the signature: see ``judgeQuote(_:)``.
    case signedIntegrityQuote = "signed-integrity-quote"

    package func run(_ input: Data) async -> FuzzOutcome {
        do {
            return try await decode(input) ? .accepted : .refused
        } catch {
            return .refused
        }
    }

    /// The error `input`'s decoder threw, or `nil` when it threw none: what the tests match an edge input against.
    package func error(decoding input: Data) async -> (any Error)? {
        do {
            _ = try await decode(input)
            return nil
        } catch {
            return error
        }
    }

    /// Whether `input` decoded; a refusal throws, or for the legacy sources answers `false`.
    private func decode(_ input: Data) async throws -> Bool {
        switch self {
        case .envelope:
            _ = try await AESGCMEncryptor(keyProvider: SuppliedKeyProvider(key: Self.envelopeKey)).decrypt(data: input, for: Self.item)
        case .passphraseParameters:
            // A provider of its own per input: it remembers the keys it derived.
            _ = try await PassphraseKeyProvider(passphrase: KeyringSecret(utf8: "fuzz"), cost: Self.passphraseCost)
                .decryptionKey(parameters: [UInt8](input))
        case .storedIdentity:
            _ = try JSONDecoder().decode(StoredDeviceIdentity.self, from: input).validatedPublicKey()
        case .legacy:
            let keyLength = input.count < 2 ? 0 : Int(input[input.startIndex]) << 8 | Int(input[input.startIndex + 1])
            let rest = input.dropFirst(2)
            let publicKey = keyLength == 0 ? nil : Data(rest.prefix(keyLength))
            let identifier = rest.count > keyLength ? KeyringSecret(rest.dropFirst(keyLength)) : nil
            let fromItems = try? FRAuthLegacyIdentifierSource.identity(publicKey: publicKey, identifier: identifier, source: "fuzz")
            let fromFile = try? FileLegacyIdentifierSource.identity(fileContents: input, source: "fuzz")
            return fromItems != nil || fromFile != nil
        case .deviceToken:
            _ = try DeviceToken.verify(input, team: Self.team, now: Self.tokenTime)
        case .signedDeviceToken:
            _ = try DeviceToken.verify(try await ResigningKeys.token(input), team: Self.team, now: Self.tokenTime)
        case .cbor:
            let item = try CBOR(decoding: Array(input))
            precondition(item.encoded == Array(input), "CBOR read an encoding it does not write")
        case .signedAppAttestation:
            let hash = Data(Self.clientDataHash)
            let (object, roots) = try ResigningKeys.appAttestation(input, clientDataHash: hash)
            _ = try VerifiedAppAttestation(attestationObject: object, clientDataHash: hash, trustedRoots: roots)
        case .eventLog:
            try Self.readEventLog(input)
        case .signedIntegrityQuote:
            _ = try Self.judgeQuote(input)
        }
        return true
    }

    package func madeInputs() async throws -> [Data] {
        switch self {
        case .envelope:
            let encryptor = AESGCMEncryptor(keyProvider: try SuppliedKeyProvider(key: Self.envelopeKey))
            return [try await encryptor.encrypt(data: Data(), for: Self.item), try await encryptor.encrypt(data: Data("{\"note\":1}".utf8), for: Self.item)]
        case .passphraseParameters:
            return [Data(try await PassphraseKeyProvider(passphrase: KeyringSecret(utf8: "fuzz"), cost: Self.passphraseCost).encryptionKey().parameters)]
        case .signedIntegrityQuote:
            return [Self.quote()]
        case .storedIdentity, .legacy, .deviceToken, .signedDeviceToken, .cbor, .signedAppAttestation, .eventLog:
            return []
        }
    }

    /// The key every envelope target input is opened with.
    package static let envelopeKey = KeyringSecret((0..<32).map { UInt8($0) })
    /// The item envelopes are bound to.
    package static let item = StorageItem(accessGroup: "io.github.swift-deviceid.fuzz", account: "fuzz")
    /// Cheap scrypt costs: larger stored ones are refused before any derivation.
    package static let passphraseCost = try! PassphraseKeyProvider.Cost(log2N: 10, r: 8, p: 1)
    /// The team device tokens are verified for.
    package static let team = "fuzz-team"
    /// The client-data hash App Attest attestations are checked for (an array: see `ResigningKeys`).
    package static let clientDataHash = [UInt8](repeating: 0xCD, count: 32)
    /// The time device tokens are verified at: within the lifetime of the seed corpus's tokens.
    package static let tokenTime = Date(timeIntervalSince1970: 1_795_395_000)
}
