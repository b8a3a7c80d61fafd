// "Stricter" for each kind of setting: how the item's own flags combine with the
// policy's, and how a user file's value is judged against the system's (a user may
// only tighten). Pure functions over the Items types; nothing here reads files.
//
// Access control: with one of them nil, the other. If one already implies the other
// (every way of satisfying it satisfies the other), that one. Otherwise both must hold:
// the union of their constraints with `and`, made valid by Apple's rules by dropping
// what a remaining constraint already implies: user-presence (any other constraint is
// an authentication of the user) and biometry-any (biometry-current-set is a narrower biometry).
// So the result is always valid and never weaker than either side.
//   implies: a constraint implies itself and user-presence; biometry-current-set also implies biometry-any.
// Accessibility: this-device-only beats not; when-unlocked beats after-first-unlock;
// when-passcode-set-this-device-only is the narrowest. Two classes combine to the
// narrowest class that satisfies both.

extension AccessControl {
    /// The stricter of two access controls (nil = no requirement; an empty set also counts as none). See the file comment.
    public static func stricter(_ a: AccessControl?, _ b: AccessControl?) -> AccessControl? {
        let left = a.flatMap { $0.constraints.isEmpty ? nil : $0 }
        let right = b.flatMap { $0.constraints.isEmpty ? nil : $0 }
        guard let left else { return right }
        guard let right else { return left }
        if left == right || left.implies(right) { return left }
        if right.implies(left) { return right }
        var constraints = Set(left.constraints).union(right.constraints)
        if constraints.count > 1 { constraints.remove(.userPresence) }
        if constraints.contains(.biometryCurrentSet) { constraints.remove(.biometryAny) }
        var flags = AccessControl()
        for constraint in constraints { flags.insert(constraint.flag) }
        if constraints.count > 1 { flags.insert(.and) }
        return flags
    }

    /// Whether every way of satisfying `self` also satisfies `other`.
    func implies(_ other: AccessControl) -> Bool {
        let mine = constraints, theirs = other.constraints
        guard !mine.isEmpty else { return theirs.isEmpty }
        guard !theirs.isEmpty else { return true }
        func satisfies(_ c: Constraint, _ d: Constraint) -> Bool {
            c == d || d == .userPresence || (c == .biometryCurrentSet && d == .biometryAny)
        }
        switch (requiresAll || mine.count == 1, other.requiresAll || theirs.count == 1) {
        case (true, true): return theirs.allSatisfy { t in mine.contains { satisfies($0, t) } }
        case (true, false): return theirs.contains { t in mine.contains { satisfies($0, t) } }
        case (false, true): return mine.allSatisfy { m in theirs.allSatisfy { satisfies(m, $0) } }
        case (false, false): return mine.allSatisfy { m in theirs.contains { satisfies(m, $0) } }
        }
    }
}

extension Accessibility {
    /// The narrower of two classes (nil = no requirement): the class that satisfies both. See the file comment.
    public static func stricter(_ a: Accessibility?, _ b: Accessibility?) -> Accessibility? {
        guard let a else { return b }
        guard let b else { return a }
        let passcode = a == .whenPasscodeSetThisDeviceOnly || b == .whenPasscodeSetThisDeviceOnly
        let thisDevice = a.isThisDeviceOnly || b.isThisDeviceOnly
        let whenUnlocked = !a.survivesLock || !b.survivesLock
        switch (passcode, thisDevice, whenUnlocked) {
        case (true, _, _): return .whenPasscodeSetThisDeviceOnly
        case (false, true, true): return .whenUnlockedThisDeviceOnly
        case (false, true, false): return .afterFirstUnlockThisDeviceOnly
        case (false, false, true): return .whenUnlocked
        case (false, false, false): return .afterFirstUnlock
        }
    }
}

extension ReuseScope.Kind {
    /// How narrow the scope is: global < session < tty < ppid (a parent's children share one terminal).
    var narrowness: Int {
        switch self {
        case .global: return 0
        case .session: return 1
        case .tty: return 2
        case .ppid: return 3
        }
    }
}
