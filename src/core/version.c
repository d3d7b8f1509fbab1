// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The library's version at run time (rdmarw/version.h). */
#include <rdmarw/version.h>

const char *rdmarw_version(void)
{
	return RDMARW_VERSION_STRING;
}
