/// One device of one team, equal to another only byte for byte, as the database compares text (Swift's `==` would
/// equate canonically equivalent strings, which the database keeps apart).
struct DeviceKey: Hashable, Sendable {
    let team: String, device: String

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

/// One update request: the bits it sets (`nil` keeps a bit) and its time in milliseconds since 1970.
struct BitUpdate: Sendable {
    let key: DeviceKey
    var bit0: Bool?, bit1: Bool?
    var milliseconds: Int64

    /// This update followed by `later`, as one.
    func then(_ later: BitUpdate) -> BitUpdate {
        BitUpdate(key: key, bit0: later.bit0 ?? bit0, bit1: later.bit1 ?? bit1, milliseconds: max(milliseconds, later.milliseconds))
    }

    /// `updates` as if applied one after the other: those of one device merged into one (the later bit wins), and
    /// grouped by the bits they set, each group with its SQL assignments for an `ON CONFLICT DO UPDATE`.
    static func merged(_ updates: [BitUpdate]) -> [(assignments: String, updates: [BitUpdate])] {
        var merged: [DeviceKey: BitUpdate] = [:]
        for update in updates { merged[update.key] = merged[update.key].map { $0.then(update) } ?? update }
        return Dictionary(grouping: merged.values) { [$0.bit0 != nil, $0.bit1 != nil] }.map { bitsSet, group in
            let assignments = zip(["bit0 = excluded.bit0", "bit1 = excluded.bit1"], bitsSet).filter(\.1).map(\.0)
            return ((assignments + ["updated_ms = excluded.updated_ms"]).joined(separator: ", "), group)
        }
    }
}
