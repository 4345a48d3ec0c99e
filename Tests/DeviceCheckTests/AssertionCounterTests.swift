@testable import DeviceCheck
import Foundation
import Testing

/// App Attest's signature counter on real files in a folder of the test's own (pure file logic: no TPM, no keyring).
@Suite("App Attest's counter: reserved on disk before use, once per assertion at first, then in growing blocks")
struct AssertionCounterTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-counter-\(UUID().uuidString)").path

    /// The value the counter's file holds: the highest reserved.
    func kept(_ counter: AssertionCounter) throws -> UInt32? {
        UInt32(try String(contentsOfFile: counter.path, encoding: .utf8).trimmingCharacters(in: .newlines))
    }

    @Test("One process's values rise by one; its file is written once for the first, then once per block of up to 32; never behind what it handed out")
    func reservations() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let counter = AssertionCounter(keyID: String(repeating: "a", count: 64), in: folder)
        try counter.create()
        #expect(try kept(counter) == 0)
        var reserved: [UInt32] = []
        for expected in UInt32(1)...200 {
            #expect(try counter.next() == expected)
            let last = try #require(try kept(counter))
            #expect(last >= expected)
            if reserved.last != last { reserved.append(last) }
        }
        // 1, then blocks of 2, 4, 8, 16 and 32: a one-shot process (a command) uses one value; a running app syncs
        // the file once in 32 assertions.
        #expect(reserved == [1, 3, 7, 15, 31, 63, 95, 127, 159, 191, 223])
    }

    @Test("The next value is above another process's reservation, and above this process's own when the file is restored from an older copy")
    func otherWriters() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let counter = AssertionCounter(keyID: String(repeating: "b", count: 64), in: folder)
        try counter.create()
        for expected in UInt32(1)...5 { #expect(try counter.next() == expected) }
        #expect(try kept(counter) == 7)
        // Another process reserves 8 to 20, as its next() writes its last value; this one reserves 21 to 28.
        try Data("0000000020\n".utf8).write(to: URL(fileURLWithPath: counter.path))
        #expect(try counter.next() == 21)
        #expect(try kept(counter) == 28)
        // An older copy restored: this process goes on above what it reserved.
        try Data("0000000002\n".utf8).write(to: URL(fileURLWithPath: counter.path))
        #expect(try counter.next() == 29)
    }

    @Test("Deleted, the counter is missing, not restarted; near 2³² − 1 the last values are handed out, then exhausted")
    func limits() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let counter = AssertionCounter(keyID: String(repeating: "c", count: 64), in: folder)
        try counter.create()
        try Data("4294967293\n".utf8).write(to: URL(fileURLWithPath: counter.path))
        #expect(try counter.next() == 4_294_967_294)
        #expect(try counter.next() == 4_294_967_295)
        #expect(throws: AssertionCounter.Failure.exhausted) { try counter.next() }
        counter.remove()
        #expect(throws: AssertionCounter.Failure.missing) { try counter.next() }
        try counter.create()
        #expect(try counter.next() == 1)
    }
}
