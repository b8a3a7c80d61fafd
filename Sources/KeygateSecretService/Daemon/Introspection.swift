// org.freedesktop.DBus.Introspectable: the XML that says which interfaces, methods, properties,
// signals and child nodes each object has (d-feet, busctl and gdbus read it; libsecret does not
// need it). Written from the specification's interface descriptions, version 0.2.
import Keygate
import KeygateCore

extension SecretServiceHost {
    func introspect(_ target: ObjectPath) throws -> String {
        var interfaces: [String] = [Self.introspectableXML]
        var children: [String] = []
        switch target {
        case .node(let path):
            switch path {
            case "/": children = ["org"]
            case "/org": children = ["freedesktop"]
            case "/org/freedesktop": children = ["secrets"]
            case ObjectPath.root + "/collection":
                children = [CollectionName.login, CollectionName.session] + (try keychain.createdCollections().map(\.name))
            case ObjectPath.root + "/session": children = sessions.keys.sorted()
            case ObjectPath.root + "/prompt": children = prompts.keys.sorted()
            default: children = []
            }
        case .service:
            interfaces += [Self.propertiesXML, Self.serviceXML]
            children = ["collection", "aliases", "session", "prompt"]
        case .collection(let name):
            interfaces += [Self.propertiesXML, Self.collectionXML]
            children = try keychain.items(in: try collection(named: name, path: target.path), matching: [:]).map(\.ref.element)
        case .alias(let alias):
            interfaces += [Self.propertiesXML, Self.collectionXML]
            children = try keychain.items(in: try collection(alias: alias, path: target.path), matching: [:]).map(\.ref.element)
        case .item, .aliasItem:
            _ = try item(at: target)
            interfaces += [Self.propertiesXML, Self.itemXML]
        case .session(let id):
            guard sessions[id] != nil else { throw SecretServiceError.noSuchObject(target.path) }
            interfaces.append(Self.sessionXML)
        case .prompt(let id):
            guard prompts[id] != nil else { throw SecretServiceError.noSuchObject(target.path) }
            interfaces.append(Self.promptXML)
        case .unknown:
            throw SecretServiceError.noSuchObject(target.path)
        }
        return """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>
            \(interfaces.joined(separator: "\n"))
            \(children.map { "  <node name=\"\($0)\"/>" }.joined(separator: "\n"))
            </node>

            """
    }

    static let introspectableXML = """
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect"><arg name="xml" type="s" direction="out"/></method>
          </interface>
        """
    static let propertiesXML = """
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="out"/></method>
            <method name="GetAll"><arg name="interface" type="s" direction="in"/><arg name="properties" type="a{sv}" direction="out"/></method>
            <method name="Set"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="in"/></method>
          </interface>
        """
    static let serviceXML = """
          <interface name="org.freedesktop.Secret.Service">
            <method name="OpenSession"><arg name="algorithm" type="s" direction="in"/><arg name="input" type="v" direction="in"/><arg name="output" type="v" direction="out"/><arg name="result" type="o" direction="out"/></method>
            <method name="CreateCollection"><arg name="properties" type="a{sv}" direction="in"/><arg name="alias" type="s" direction="in"/><arg name="collection" type="o" direction="out"/><arg name="prompt" type="o" direction="out"/></method>
            <method name="SearchItems"><arg name="attributes" type="a{ss}" direction="in"/><arg name="unlocked" type="ao" direction="out"/><arg name="locked" type="ao" direction="out"/></method>
            <method name="Unlock"><arg name="objects" type="ao" direction="in"/><arg name="unlocked" type="ao" direction="out"/><arg name="prompt" type="o" direction="out"/></method>
            <method name="Lock"><arg name="objects" type="ao" direction="in"/><arg name="locked" type="ao" direction="out"/><arg name="Prompt" type="o" direction="out"/></method>
            <method name="GetSecrets"><arg name="items" type="ao" direction="in"/><arg name="session" type="o" direction="in"/><arg name="secrets" type="a{o(oayays)}" direction="out"/></method>
            <method name="ReadAlias"><arg name="name" type="s" direction="in"/><arg name="collection" type="o" direction="out"/></method>
            <method name="SetAlias"><arg name="name" type="s" direction="in"/><arg name="collection" type="o" direction="in"/></method>
            <property name="Collections" type="ao" access="read"/>
            <signal name="CollectionCreated"><arg name="collection" type="o"/></signal>
            <signal name="CollectionDeleted"><arg name="collection" type="o"/></signal>
            <signal name="CollectionChanged"><arg name="collection" type="o"/></signal>
          </interface>
        """
    static let collectionXML = """
          <interface name="org.freedesktop.Secret.Collection">
            <method name="Delete"><arg name="prompt" type="o" direction="out"/></method>
            <method name="SearchItems"><arg name="attributes" type="a{ss}" direction="in"/><arg name="results" type="ao" direction="out"/></method>
            <method name="CreateItem"><arg name="properties" type="a{sv}" direction="in"/><arg name="secret" type="(oayays)" direction="in"/><arg name="replace" type="b" direction="in"/><arg name="item" type="o" direction="out"/><arg name="prompt" type="o" direction="out"/></method>
            <property name="Items" type="ao" access="read"/>
            <property name="Label" type="s" access="readwrite"/>
            <property name="Locked" type="b" access="read"/>
            <property name="Created" type="t" access="read"/>
            <property name="Modified" type="t" access="read"/>
            <signal name="ItemCreated"><arg name="item" type="o"/></signal>
            <signal name="ItemDeleted"><arg name="item" type="o"/></signal>
            <signal name="ItemChanged"><arg name="item" type="o"/></signal>
          </interface>
        """
    static let itemXML = """
          <interface name="org.freedesktop.Secret.Item">
            <method name="Delete"><arg name="Prompt" type="o" direction="out"/></method>
            <method name="GetSecret"><arg name="session" type="o" direction="in"/><arg name="secret" type="(oayays)" direction="out"/></method>
            <method name="SetSecret"><arg name="secret" type="(oayays)" direction="in"/></method>
            <property name="Locked" type="b" access="read"/>
            <property name="Attributes" type="a{ss}" access="readwrite"/>
            <property name="Label" type="s" access="readwrite"/>
            <property name="Created" type="t" access="read"/>
            <property name="Modified" type="t" access="read"/>
          </interface>
        """
    static let sessionXML = """
          <interface name="org.freedesktop.Secret.Session">
            <method name="Close"/>
          </interface>
        """
    static let promptXML = """
          <interface name="org.freedesktop.Secret.Prompt">
            <method name="Prompt"><arg name="window-id" type="s" direction="in"/></method>
            <method name="Dismiss"/>
            <signal name="Completed"><arg name="dismissed" type="b"/><arg name="result" type="v"/></signal>
          </interface>
        """
}
