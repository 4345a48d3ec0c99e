// Secure notes: a Codable value in the keyring, sealed with AES-256-GCM.
//
//     swift run SecureNotes        (run it twice: the notes pile up)
//
// KeychainStorage keeps one value per (access group, account). SecuredKeyEncryptor seals it with a key
// that is kept as a separate keyring item, and binds the ciphertext to this item.
import Foundation
import SecureStorage

// 1. Any Codable (and Sendable) type can be stored.
struct Note: Codable, Sendable {
    var text: String
    var written: Date
}

let group: AccessGroup = "io.github.swift-deviceid.examples"

do {
    // 2. A storage for an array of notes, encrypted. `cacheable` keeps the value in memory after a read.
    let notes = KeychainStorage<[Note]>(
        account: "secure-notes",
        accessGroup: group,
        encryptor: SecuredKeyEncryptor(accessGroup: group),
        cacheable: true)

    // 3. `get()` returns nil only when there is definitely no item yet; a locked keyring throws instead.
    var all = try await notes.get() ?? []
    all.append(Note(text: "Note #\(all.count + 1), written by the SecureNotes example", written: Date()))

    // 4. Save replaces the stored value. What lands in the keyring is an envelope, not JSON:
    //    `secret-tool lookup service io.github.swift-deviceid.examples account secure-notes` shows no plaintext.
    try await notes.save(item: all)

    for note in all { print("\(note.written.formatted(date: .abbreviated, time: .standard))  \(note.text)") }
    print("\(all.count) note(s), sealed with AES-256-GCM in your keyring.")
} catch {
    FileHandle.standardError.write(Data("SecureNotes: \(error)\n".utf8))
    exit(1)
}
