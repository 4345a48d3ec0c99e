/// What `deviceid-server` answers a backend about a device's integrity: the labels it meets, every check that
/// failed, and the coarse facts a backend may act on. Never the event log, the PCRs, the endorsement certificate or the
/// attestation key.
public struct IntegrityVerdict: Sendable, Hashable, Codable {
    /// The labels met, in ``IntegrityLabel``'s order; empty when BASIC is not met.
    public let labels: [IntegrityLabel]
    /// Every check that failed, in the order they were made.
    public let reasons: [IntegrityFailure]
    /// Whether Secure Boot was on (`nil` when the log could not be trusted or read for it).
    public let secureBoot: Bool?

    enum CodingKeys: String, CodingKey { case labels, reasons, secureBoot = "secure_boot" }

    /// The verdict on checks whose failures are `reasons` (each withholds its label and those above it), on a TPM whose
    /// maker is marked virtual or not, with Secure Boot on, off or unknown.
    public init(reasons: [IntegrityFailure], secureBoot: Bool?, virtual: Bool) {
        let withheld = Set(reasons.map(\.reason.withholds))
        var labels: [IntegrityLabel] = []
        if !withheld.contains(.basic) {
            labels.append(.basic)
            if !withheld.contains(.device) {
                if virtual {
                    labels.append(.virtual)
                } else {
                    labels.append(.device)
                    if !withheld.contains(.strong) { labels.append(.strong) }
                }
            }
        }
        (self.labels, self.reasons, self.secureBoot) = (labels.sorted(), reasons, secureBoot)
    }
}

extension IntegrityVerdict {
    /// This verdict with `failures` (checks the server made outside the evidence: its nonce) first among its reasons,
    /// and the labels they withhold taken away: the labels are computed again from all the reasons, as the verifier
    /// computed them (a virtual TPM's verdict without VIRTUAL already has a reason that withholds it).
    public func adding(_ failures: [IntegrityFailure]) -> IntegrityVerdict {
        IntegrityVerdict(reasons: failures + reasons, secureBoot: secureBoot, virtual: labels.contains(.virtual))
    }
}

/// A check that failed: its stable reason, and what exactly failed where that says more (the first event that breaks a
/// replay, the variable a Secure Boot state lacks). A detail names positions and the firmware's own names, never the
/// device's.
public struct IntegrityFailure: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The check.
    public let reason: IntegrityReason
    /// What failed, in one line, or `nil` when the reason says it all.
    public let detail: String?

    enum CodingKeys: String, CodingKey { case reason = "code", detail }

    /// A failure of the check `reason`, with what exactly failed.
    public init(_ reason: IntegrityReason, _ detail: String? = nil) {
        (self.reason, self.detail) = (reason, detail)
    }

    /// The reason's code, and the detail.
    public var description: String { reason.rawValue + (detail.map { ": " + $0 } ?? "") }
}
