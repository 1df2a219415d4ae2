package main

import (
	"fmt"

	"github.com/srt-go/srt"
)

// windowsInstall is `srt windows-install [--sandbox-user NAME] [--force]`
// and `srt windows-uninstall`: the elevated, one-time making (and
// removal) of the Windows sandbox account. The reference's options for
// machine-wide filters and profile grants are refused: srt-go's filters
// live with each session (windows.proxyPortRange, windows.sublayerGuid
// and network.allowLocalBinding in the settings), and it grants reads
// per session.
func windowsInstall(c *cli, sub string, args []string) int {
	account, force := "", false
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--sandbox-user":
			if sub != "windows-install" || i+1 == len(args) {
				c.errorf("%s: %s takes a name, and only for windows-install", sub, a)
				return 1
			}
			i++
			account = args[i]
		case "--force":
			if sub != "windows-install" {
				c.errorf("%s: unknown argument %q", sub, a)
				return 1
			}
			force = true
		case "--sublayer-guid", "--proxy-port-range", "--allow-loopback":
			c.errorf("%s: %s: srt-go puts its network filters in place for each session, from the settings (windows.sublayerGuid, windows.proxyPortRange, network.allowLocalBinding); the install makes none", sub, a)
			return 1
		case "--profile-exclude", "--profile-include", "--skip-profile-grant":
			c.errorf("%s: %s: srt-go grants reads for each session, from the settings (filesystem.allowRead); the install grants none", sub, a)
			return 1
		default:
			c.errorf("%s: unknown argument %q (srt windows-install [--sandbox-user NAME] [--force]; srt windows-uninstall)", sub, a)
			return 1
		}
	}
	var err error
	if sub == "windows-install" {
		err = srt.InstallWindows(account, force)
	} else {
		err = srt.UninstallWindows()
	}
	if err != nil {
		c.errorf("%s: %v", sub, err)
		return 1
	}
	fmt.Fprintf(c.stdout, "%s: done\n", sub)
	return 0
}
