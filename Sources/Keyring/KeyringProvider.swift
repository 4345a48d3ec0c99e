/// The program that answers for the Secret Service on a bus: what users most often need to know when nothing works.
package struct KeyringProvider: Sendable, Hashable {
    /// Its unique bus name (such as `:1.4`), which owns `org.freedesktop.secrets` now.
    package let busName: String
    /// Its process ID as the bus daemon reports it; `nil` when the bus does not say.
    package let processID: Int32?
    /// Its executable (the target of `/proc/PID/exe`); `nil` when this user may not read it, or the process runs in
    /// another PID namespace than ours.
    package let executable: String?
}
