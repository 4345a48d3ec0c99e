import NIOConcurrencyHelpers

/// What the server keeps after a request, bounded in bytes whatever its callers send, and shared fairly between the
/// teams that fill it: each entry is counted at the cost its owner gives it, in its team's part. An entry that would
/// take the cache past its capacity first empties one part — its own team's when that team holds its share or more
/// (the capacity over the teams holding entries), else the largest — so a flood of distinct entries only costs their
/// checks again, and one team's flood never empties the part of a team that holds less than its share.
package final class ByteBoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Entries {
        var values: [Key: Value] = [:]
        /// Each team's part: its bytes and its keys.
        var parts: [String: (bytes: Int, keys: [Key])] = [:]
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

    /// The bytes `team`'s part holds.
    package func bytes(of team: String) -> Int { entries.withLockedValue { $0.parts[team]?.bytes ?? 0 } }

    /// The value kept for `key`, if any.
    package subscript(key: Key) -> Value? { entries.withLockedValue { $0.values[key] } }

    /// Keeps `value` for `key` in `team`'s part, counted as `cost` bytes; one costing more than the whole capacity is
    /// not kept.
    package func keep(_ value: Value, for key: Key, team: String, cost: Int) {
        guard cost <= byteCapacity else { return }
        entries.withLockedValue { entries in
            guard entries.values[key] == nil else {
                entries.values[key] = value
                return
            }
            while entries.bytes + cost > byteCapacity {
                let share = byteCapacity / (entries.parts.count + (entries.parts[team] == nil ? 1 : 0))
                let own = entries.parts[team]?.bytes ?? 0
                let emptied = own > 0 && own + cost > share ? team : entries.parts.max { $0.value.bytes < $1.value.bytes }!.key
                guard let part = entries.parts.removeValue(forKey: emptied) else { break }
                for key in part.keys { entries.values[key] = nil }
                entries.bytes -= part.bytes
            }
            entries.values[key] = value
            entries.parts[team, default: (0, [])].bytes += cost
            entries.parts[team, default: (0, [])].keys.append(key)
            entries.bytes += cost
        }
    }
}
