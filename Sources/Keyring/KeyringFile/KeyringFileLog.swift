import Logging

extension Logger {
    /// Where the sandbox's keyring file logs its steps and how long each took — asking the Secret portal for the
    /// key, loading the file, waiting for its write lock — at debug level, and a missed portal answer at notice
    /// level; never a secret. It goes through the `LoggingSystem` the app set up (`deviceid`: `DEVICEID_LOG_LEVEL`).
    static let keyringFile = Logger(label: "swift-deviceid.keyring-file")
}
