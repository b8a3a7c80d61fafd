// `keygate migrate`: moves the keychain's items from one store to the other without ever
// unsealing them. Each sealed blob is copied as it is (its associated data is the item's
// identity, not the store, so it opens the same from either store), read back and compared
// byte for byte before the source copy may be deleted. An item already in the destination
// with the same blob counts as done, so a migration that was interrupted can simply be run
// again. An item whose identity exists in the destination with another blob is a conflict:
// skipped, never overwritten, never deleted from the source. No key is needed, so it never
// prompts. A gated item's sealed label (ItemLabels) is copied sealed, as its blob
// is. Afterwards the destination is recorded as the keychain's store (StoreSelection).
//
// Delegates: the stores to KeygateStorage (StoreSelection.store), attribute comparison to
// ItemAttributeCodec.

/// What one migration did.
public struct MigrationReport: Sendable, Equatable {
    public var source: String
    public var destination: String
    /// Items copied to the destination and verified.
    public var copied: [String] = []
    /// Items that were already in the destination with the same sealed blob.
    public var alreadyThere: [String] = []
    /// Items left alone: the destination holds a different item under the same identity.
    public var conflicts: [String] = []
    /// Source copies deleted after verification (only with deleteSource).
    public var deleted: Int = 0
}

/// One keychain's move between stores: where its data lives, and whether a Secret Service may
/// show its unlock window.
public struct StoreMigration: Sendable {
    let context: KeychainContext
    let unlockPrompt: UnlockPromptSetting

    /// Copies every item of the other store into `destination`; with `deleteSource`, deletes
    /// each source item once its copy reads back byte-identical. Never prompts.
    public func run(to destination: StoreKind, deleteSource: Bool) throws -> MigrationReport {
        let sourceKind: StoreKind = destination == .embedded ? .secretService : .embedded
        let source = StoreSelection.store(sourceKind, dataDirectory: context.dataDirectory, deadline: context.storeDeadline,
                                          unlockPrompt: unlockPrompt, environment: context.environment)
        let target = StoreSelection.store(destination, dataDirectory: context.dataDirectory, deadline: context.storeDeadline,
                                          unlockPrompt: unlockPrompt, environment: context.environment)
        var report = MigrationReport(source: sourceKind.rawValue, destination: destination.rawValue)

        for item in try source.search(ItemQuery(), loadBlobs: true) {
            let identity = item.attributes.identity
            let exact = ItemQuery(exactly: identity)
            guard let blob = item.blob else {
                throw KeychainError.notAvailable("the \(sourceKind.rawValue) store returned no secret for "
                                                 + "\(identity.displayName): nothing was moved for it; try again")
            }
            if let present = try target.search(exact, loadBlobs: true).first {
                guard present.blob == blob else {
                    report.conflicts.append(identity.displayName)
                    continue
                }
                report.alreadyThere.append(identity.displayName)
            } else {
                try target.create(item.attributes, blob: blob, replace: false)
                try verify(item, blob: blob, in: target, destination: destination)
                report.copied.append(identity.displayName)
            }
            if deleteSource {
                report.deleted += try source.delete(exact)
            }
        }
        try PrivateDirectory.make(context.dataDirectory)
        try StoreSelection.record(destination, in: context.dataDirectory)
        return report
    }

    /// The copy must read back with the same blob and the same attributes.
    private func verify(_ item: StoredItem, blob: [UInt8], in target: any ItemStore, destination: StoreKind) throws {
        let identity = item.attributes.identity
        let copy = try target.search(ItemQuery(exactly: identity), loadBlobs: true)
        guard copy.count == 1, let read = copy.first, read.blob == blob,
              ItemAttributeCodec.encode(read.attributes) == ItemAttributeCodec.encode(item.attributes),
              read.attributes.label == (item.attributes.sealedLabel != nil ? nil : ItemAttributeCodec.label(for: item.attributes)) else {
            throw KeychainError.notAvailable("the copy of \(identity.displayName) in the \(destination.rawValue) store "
                                             + "does not read back identical: the source was left as it was; check the "
                                             + "store with keygate doctor, then run keygate migrate again")
        }
    }
}

extension KeychainOperations {
    /// The move of this keychain's items to the other store (`keygate migrate`).
    public var storeMigration: StoreMigration { StoreMigration(context: context, unlockPrompt: unlockPrompt) }
}
