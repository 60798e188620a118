/* SPDX-License-Identifier: MIT */
/*
 * ark/ark.h - umbrella header: version macros and every module.
 */
#ifndef ARK_ARK_H
#define ARK_ARK_H

#define ARK_VERSION_MAJOR 0
#define ARK_VERSION_MINOR 1
#define ARK_VERSION_PATCH 0

#include "ark/core.h"
#include "ark/entity.h"
#include "ark/idmap.h"
#include "ark/idset.h"
#include "ark/io.h"
#include "ark/mainq.h"
#include "ark/pool.h"
#include "ark/ref.h"
#include "ark/table.h"

#endif /* ARK_ARK_H */
