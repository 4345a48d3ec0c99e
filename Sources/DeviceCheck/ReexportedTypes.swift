// The server half: an app that makes tokens with `DeviceCheck` checks them (in its tests, or its own backend) without
// a second import.
@_exported import DeviceVerifier
