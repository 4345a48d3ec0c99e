/// One device of one team, equal to another only byte for byte, as the database compares text (Swift's `==` would
/// equate canonically equivalent strings, which the database keeps apart).
///
/// `device` is a device id, or where a TPM-bound key's bits live (``tpm(team:pseudonym:)``).
struct DeviceKey: Hashable, Sendable {
    let team: String, device: String

    /// The row of the TPM whose pseudonym for `team` is `pseudonym`: a name no device id can have (those are hex).
    static func tpm(team: String, pseudonym: String) -> DeviceKey {
        DeviceKey(team: team, device: "tpm:" + pseudonym)
    }

    static func == (left: DeviceKey, right: DeviceKey) -> Bool {
        left.team.utf8.elementsEqual(right.team.utf8) && left.device.utf8.elementsEqual(right.device.utf8)
    }

    func hash(into hasher: inout Hasher) {
        for text in [team, device] {
            hasher.combine(text.utf8.count)
            if text.utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
                for byte in text.utf8 { hasher.combine(byte) }
            }
        }
    }
}

/// A bit as an update set it, and when (milliseconds since 1970): of two updates of a bit, the later one wins,
/// whichever arrives last.
struct SetBit: Sendable, Equatable {
    let value: Bool
    let milliseconds: Int64

    /// Of `earlier` and `later` (in the order they arrived), the one set later; the one that arrived later on a tie.
    static func latest(_ earlier: SetBit?, _ later: SetBit?) -> SetBit? {
        guard let earlier, let later else { return later ?? earlier }
        return earlier.milliseconds > later.milliseconds ? earlier : later
    }
}

/// One update request: the bits it sets (`nil` keeps a bit), each with its time, and the time of the update.
struct BitUpdate: Sendable {
    var key: DeviceKey
    var bit0: SetBit?, bit1: SetBit?
    var milliseconds: Int64

    init(key: DeviceKey, bit0: Bool?, bit1: Bool?, milliseconds: Int64) {
        self.key = key
        self.bit0 = bit0.map { SetBit(value: $0, milliseconds: milliseconds) }
        self.bit1 = bit1.map { SetBit(value: $0, milliseconds: milliseconds) }
        self.milliseconds = milliseconds
    }

    /// This update followed by `later`, as one: of each bit, the one set later.
    func then(_ later: BitUpdate) -> BitUpdate {
        var merged = later
        merged.bit0 = SetBit.latest(bit0, later.bit0)
        merged.bit1 = SetBit.latest(bit1, later.bit1)
        merged.milliseconds = max(milliseconds, later.milliseconds)
        return merged
    }

    /// `updates` as if applied one after the other: those of one device merged into one (the later bit wins), and
    /// grouped by the bits they set, each group with its SQL assignments for an `ON CONFLICT DO UPDATE`
    /// (``BitsSQL/updateAssignments(setting:)``).
    static func merged(_ updates: [BitUpdate]) -> [(assignments: String, updates: [BitUpdate])] {
        var merged: [DeviceKey: BitUpdate] = [:]
        for update in updates { merged[update.key] = merged[update.key].map { $0.then(update) } ?? update }
        return Dictionary(grouping: merged.values) { [$0.bit0 != nil, $0.bit1 != nil] }.map { bitsSet, group in
            (BitsSQL.updateAssignments(setting: zip(["bit0", "bit1"], bitsSet).filter(\.1).map(\.0)), group)
        }
    }
}
