import FoundationEssentials

extension EventLog {
    /// The values the log's events extend the PCRs of `bank` to, for every PCR (0–23): each starts where a TPM's
    /// reset leaves it (zeros, PCR 0's last byte the ``startupLocality``; PCRs 17–22, which only a dynamic launch
    /// resets, all ones) and is extended by each of its events' digests, `EV_NO_ACTION` events excepted.
    ///
    /// ``EventLogError/bankMissing(_:)`` when the log carries no digests of `bank` (a legacy log has SHA-1's only).
    public func replay(_ bank: PCRBank) throws(EventLogError) -> [Data] {
        guard banks.contains(bank) else { throw .bankMissing(bank) }
        var values = (0..<24).map { initialValue(of: $0, in: bank) }
        for event in events where event.type != .noAction {
            values[event.pcr] = bank.extend(values[event.pcr], with: event.digests[bank]!)
        }
        return values
    }

    /// The first event at which the log stops agreeing with `quoted` (PCR values of `bank` a TPM reported), or `nil`
    /// when the log replays to every one of them exactly.
    ///
    /// For each PCR that disagrees: when a leading part of its events reaches the quoted value, the first event after
    /// that part (the log goes on past what the TPM measured); else the first of its events whose digest should be of
    /// its data (``MeasuredEvent/digestCoversData``) and is not; else the PCR's first event. The earliest of these.
    public func firstBreak(_ bank: PCRBank, against quoted: [Int: Data]) throws(EventLogError) -> MeasuredEvent? {
        let replayed = try replay(bank)
        var breaks: [MeasuredEvent] = []
        for (pcr, value) in quoted where replayed[pcr] != value {
            let own = events.filter { $0.pcr == pcr && $0.type != .noAction }
            var running = initialValue(of: pcr, in: bank)
            var reached: Int?
            if running == value { reached = 0 }
            for (index, event) in own.enumerated() where reached == nil {
                running = bank.extend(running, with: event.digests[bank]!)
                if running == value { reached = index + 1 }
            }
            if let reached, reached < own.count {
                breaks.append(own[reached])
            } else if let altered = own.first(where: { $0.digestCoversData && $0.digests[bank] != bank.hash($0.data) }) {
                breaks.append(altered)
            } else if let first = own.first {
                breaks.append(first)
            } else {
                // No event of this PCR, and a value that is not the reset one: name the log's first event.
                breaks.append(events[0])
            }
        }
        return breaks.min { $0.number < $1.number }
    }

    /// Where PCR `pcr` of `bank` starts.
    private func initialValue(of pcr: Int, in bank: PCRBank) -> Data {
        var value = Data(repeating: (17...22).contains(pcr) ? 0xFF : 0, count: bank.digestSize)
        if pcr == 0 { value[value.count - 1] = startupLocality }
        return value
    }
}

extension MeasuredEvent {
    /// Whether the event's type says its digest is of its data, as the TCG PC Client profile has it for
    /// separators, actions and Secure Boot variables. Used only to name where a log breaks, never to trust content:
    /// the type is not covered by the digest.
    public var digestCoversData: Bool {
        [EventType.separator, .action, .efiAction, .efiVariableDriverConfig, .efiVariableAuthority].contains(type)
    }
}
