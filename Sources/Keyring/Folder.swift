/// The folder holding the file at `path`: `.` for a bare name, `/` for a file at the root.
func folder(of path: String) -> String {
    path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
}
