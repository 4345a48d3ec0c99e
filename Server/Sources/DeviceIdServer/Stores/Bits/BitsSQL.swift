/// The SQL of the `bits` table, which SQLite and PostgreSQL agree on and ``DeviceBitStore`` and ``TPMBindingStore``
/// share: how it keeps a key's bits and its TPM's, how an update orders by time, and how a key's bits meet its TPM's
/// at binding.
///
/// A row holds a key's own bits (`device` is a device id) or a TPM's (``DeviceKey/tpm(team:pseudonym:)``). A key
/// bound to its TPM keeps its row, whose `subject` names the TPM's row: that is what being bound is
/// (`hardware_bound`), read from nowhere else. An update of a bound key finds its row bound (`ON CONFLICT … WHERE
/// subject IS NULL` leaves it) and goes on to the TPM's. Each bit keeps the time it was set (`bit0_ms`, `bit1_ms`;
/// `NULL`: never), and an update changes a bit only when it is not older than the bit's time, so a statement that
/// commits late, after its request was answered `503`, never overwrites a later one. `updated_ms` is the time of the
/// row's latest update, 0 for the row of a key bound before it had any bits.
///
/// Binding is one statement (``bind(_:to:)``, which sets `subject`, and ``mergeIntoTPM(_:)``, which merges the key's
/// bits into the TPM's: in PostgreSQL one statement of the two, in SQLite the first, whose trigger runs the second), so
/// the two happen together or not at all. The TPM keeps every bit it holds: a key the server has not bound yet can only
/// add the bits the TPM never had.
enum BitsSQL {
    /// The bits of a key's row `d`, or of its TPM's row `s` once it is bound (`NULL`s when there is none): `bit0`,
    /// `bit1`, `updated_ms` and `hardware_bound`.
    static let recordColumns = [
        "CASE WHEN d.subject IS NULL THEN d.bit0 ELSE s.bit0 END AS bit0", "CASE WHEN d.subject IS NULL THEN d.bit1 ELSE s.bit1 END AS bit1",
        "COALESCE(CASE WHEN d.subject IS NULL THEN d.updated_ms ELSE s.updated_ms END, 0) AS updated_ms",
        "d.subject IS NOT NULL AS hardware_bound",
    ].joined(separator: ", ")

    /// The assignments of an update's `ON CONFLICT DO UPDATE` for the bits it sets (`bit0`, `bit1`, or both): each
    /// bit taken unless the row's was set later, and the latest update's time.
    static func updateAssignments(setting bits: [String]) -> String {
        (bits.flatMap { bit in
            let newer = "excluded.\(bit)_ms >= COALESCE(bits.\(bit)_ms, -1)"
            return ["\(bit) = CASE WHEN \(newer) THEN excluded.\(bit) ELSE bits.\(bit) END",
                    "\(bit)_ms = CASE WHEN \(newer) THEN excluded.\(bit)_ms ELSE bits.\(bit)_ms END"]
        } + [latestUpdate]).joined(separator: ", ")
    }

    /// The statement that merges into their TPMs' rows the bits of the bound keys' rows `rows` gives (an SQL source of
    /// `team, subject, bit0, bit1, bit0_ms, bit1_ms, updated_ms`, see ``boundRow(_:)``): of each bit, the TPM's when it
    /// holds one, else the key's.
    static func mergeIntoTPM(_ rows: String) -> String {
        let keyAdds = ["bit0", "bit1"].map { "(bits.\($0)_ms IS NULL AND excluded.\($0)_ms IS NOT NULL)" }.joined(separator: " OR ")
        let assignments = ["bit0", "bit1"].flatMap { bit in
            ["\(bit) = CASE WHEN bits.\(bit)_ms IS NULL THEN excluded.\(bit) ELSE bits.\(bit) END",
             "\(bit)_ms = COALESCE(bits.\(bit)_ms, excluded.\(bit)_ms)"]
        } + ["updated_ms = CASE WHEN \(keyAdds) THEN \(latest("updated_ms")) ELSE bits.updated_ms END"]
        return "INSERT INTO bits (team, device, bit0, bit1, bit0_ms, bit1_ms, updated_ms) \(rows) "
            + "ON CONFLICT (team, device) DO UPDATE SET \(assignments.joined(separator: ", "))"
    }

    /// The source ``mergeIntoTPM(_:)`` takes for one bound key's row, spelt `row` (`new`, in a trigger).
    static func boundRow(_ row: String) -> String {
        "VALUES (" + ["team", "subject", "bit0", "bit1", "bit0_ms", "bit1_ms", "updated_ms"].map { "\(row).\($0)" }.joined(separator: ", ") + ")"
    }

    /// The statement that binds `key`'s row to the TPM's row `tpm`, making it if there is none; it answers the row as
    /// ``mergeIntoTPM(_:)`` takes it, naming the TPM's row it is bound to: the first one, when it was bound before.
    static func bind(_ key: DeviceKey, to tpm: DeviceKey) -> SQLStatement {
        """
        INSERT INTO bits (team, device, bit0, bit1, updated_ms, subject) VALUES (\(key.team), \(key.device), false, false, 0, \(tpm.device))
        ON CONFLICT (team, device) DO UPDATE SET subject = COALESCE(bits.subject, excluded.subject)
        RETURNING team, subject, bit0, bit1, bit0_ms, bit1_ms, updated_ms
        """
    }

    private static let latestUpdate = "updated_ms = " + latest("updated_ms")

    private static func latest(_ column: String) -> String {
        "CASE WHEN excluded.\(column) > bits.\(column) THEN excluded.\(column) ELSE bits.\(column) END"
    }
}
