import Keygate
