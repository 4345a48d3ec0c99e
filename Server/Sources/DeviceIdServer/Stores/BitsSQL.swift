/// The SQL both stores write alike, SQLite and PostgreSQL agreeing on it: how the `bits` table keeps a key's bits and
/// its TPM's, and how two rows' bits merge.
///
/// A row holds a key's own bits (`device` is a device id) or a TPM's (``DeviceKey/tpm(team:pseudonym:)``). A key
/// bound to its TPM keeps its row, whose `subject` names the TPM's row: an update of the key finds its row bound
/// (`ON CONFLICT … WHERE subject IS NULL` leaves it) and goes on to the TPM's; the key's own bits, frozen at the
/// binding, are merged into the TPM's then and into every read, so that none is lost even when the binding is
/// interrupted between its two statements. Each bit keeps the time it was last set (`bit0_ms`, `bit1_ms`; `NULL`:
/// never), so that of two rows' bits the later wins; `updated_ms` is the time of the row's last update, 0 for the row
/// of a key bound before it had any bits.
enum BitsSQL {
    /// Columns of the merged bits of a key's row `d` and its TPM's row `s` (`NULL`s when there is none):
    /// `bit0`, `bit1` and `updated_ms`.
    static let mergedColumns = [
        later("bit0", of: "s", over: "d") + " AS bit0", later("bit1", of: "s", over: "d") + " AS bit1",
        "CASE WHEN s.updated_ms > COALESCE(d.updated_ms, 0) THEN s.updated_ms ELSE COALESCE(d.updated_ms, 0) END AS updated_ms",
    ].joined(separator: ", ")

    /// The assignments of an `INSERT … ON CONFLICT DO UPDATE` that merges the row proposed into the row there.
    static let mergeAssignments = ["bit0", "bit1"].flatMap { bit in
        ["\(bit) = " + later(bit, of: "excluded", over: "bits"), "\(bit)_ms = " + later(bit, column: "\(bit)_ms", of: "excluded", over: "bits")]
    }.joined(separator: ", ") + ", updated_ms = CASE WHEN excluded.updated_ms > bits.updated_ms THEN excluded.updated_ms ELSE bits.updated_ms END"

    /// `column` (by default the bit itself) of row `candidate` when its `bit` was set later than in row `current`,
    /// else of `current`.
    private static func later(_ bit: String, column: String? = nil, of candidate: String, over current: String) -> String {
        let column = column ?? bit
        return "CASE WHEN \(candidate).\(bit)_ms > COALESCE(\(current).\(bit)_ms, -1) THEN \(candidate).\(column) ELSE \(current).\(column) END"
    }
}
