// Everything a user of gpkv includes.
#pragma once

#include "gpkv/batch.h"
#include "gpkv/db.h"
#include "gpkv/iterator.h"
#include "gpkv/options.h"
#include "gpkv/status.h"
#include "gpkv/table.h"
#include "gpkv/version.h"
