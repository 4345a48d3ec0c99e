/// Apple's App Attest environments, as an attestation's authenticator data names them in its AAGUID: a backend accepts
/// development attestations while an app is built for testing, and production ones only once it ships.
public enum AppAttestEnvironment: String, Sendable, CaseIterable, Codable {
    /// `appattestdevelop`: Apple's for development builds, and the default here as there.
    case development
    /// `appattest` followed by seven zero bytes: Apple's for apps as they ship.
    case production

    /// The AAGUID: 16 bytes, as Apple writes them.
    package var aaguid: [UInt8] {
        switch self {
        case .development: Array("appattestdevelop".utf8)
        case .production: Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        }
    }

    /// The environment whose AAGUID is `aaguid`; `nil` for any other.
    package init?<Bytes: Collection<UInt8>>(aaguid: Bytes) {
        guard let environment = Self.allCases.first(where: { $0.aaguid.elementsEqual(aaguid) }) else { return nil }
        self = environment
    }
}
