import DeviceVerifier
import Foundation

/// Where the attestation CA keeps the private keys of the generations made while it is given (`--attestation-ca-key-file`,
/// `attestation-ca --key-file`), instead of the database: a PEM file of the server host's, mode 0600 (refused when group
/// or others may read it), to which a new generation's keys are appended. The database then holds only certificates.
package struct AttestationCAKeyFile: Sendable {
    /// The file's path.
    package let path: String

    /// The most the file may hold: thousands of keys.
    static let maximumSize = 1 << 20

    /// The key file at `path`.
    package init(path: String) {
        self.path = path
    }

    /// The keys the file holds now: none when it does not exist.
    func read() throws -> AttestationCAKeys {
        try PrivateFile.check(path)
        guard let handle = FileHandle(forReadingAtPath: path) else {
            if !FileManager.default.fileExists(atPath: path) { return try AttestationCAKeys(pem: []) }
            throw AttestationCAError.keyFile(path, "it cannot be read")
        }
        defer { try? handle.close() }
        let contents = try handle.read(upToCount: Self.maximumSize + 1) ?? Data()
        guard contents.count <= Self.maximumSize else { throw AttestationCAError.keyFile(path, "it is over 1 MiB") }
        return try AttestationCAKeys(pem: [UInt8](contents))
    }

    /// Appends `privateKey` (`04‖X‖Y‖D`) to the file, made mode 0600 when missing, and syncs it.
    func append(_ privateKey: [UInt8]) throws {
        try PrivateFile.check(path)
        let pem = try AttestationCAKeys.pem(privateKey: privateKey)
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw AttestationCAError.keyFile(path, String(cString: strerror(errno))) }
        defer { close(descriptor) }
        let written = pem.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == pem.count, fsync(descriptor) == 0 else { throw AttestationCAError.keyFile(path, String(cString: strerror(errno))) }
    }
}
