import NIOConcurrencyHelpers

/// What the server keeps after a request, bounded in bytes whatever its callers send: each entry is counted at the
/// cost its owner gives it, and an entry that would take the cache past its capacity first empties it, so a flood of
/// distinct entries only costs their checks again.
package final class ByteBoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Entries {
        var values: [Key: Value] = [:]
        var bytes = 0
    }

    private let entries = NIOLockedValueBox(Entries())
    private let byteCapacity: Int

    /// An empty cache that holds at most `byteCapacity` bytes.
    package init(byteCapacity: Int) {
        self.byteCapacity = byteCapacity
    }

    /// The bytes the cache holds, as its entries' costs count them: never more than its capacity.
    package var bytes: Int { entries.withLockedValue(\.bytes) }

    /// The value kept for `key`, if any.
    package subscript(key: Key) -> Value? { entries.withLockedValue { $0.values[key] } }

    /// Keeps `value` for `key`, counted as `cost` bytes; one costing more than the whole capacity is not kept.
    package func keep(_ value: Value, for key: Key, cost: Int) {
        guard cost <= byteCapacity else { return }
        entries.withLockedValue { entries in
            if entries.values[key] == nil && entries.bytes + cost > byteCapacity { entries = Entries() }
            if entries.values.updateValue(value, forKey: key) == nil { entries.bytes += cost }
        }
    }
}
