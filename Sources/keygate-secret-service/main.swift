// keygate-secret-service: keeps secrets out of core dumps, reads the environment once (this
// program is one of its edges, EnvironmentReadTests), and runs the daemon
// (KeygateSecretService/Daemon/SecretServiceDaemon) with argv as text.
import KeygateCore
import KeygateSecretService

CoreDumps.disable()
ProcessExit.now(SecretServiceDaemon.run(arguments: Array(CommandLine.arguments.dropFirst()),
                                        environment: KeygateEnvironment.process()))
