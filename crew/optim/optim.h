#pragma once
// crew::optim: optimizers and learning-rate schedules (Paddle's paddle.optimizer).
#include "crew/optim/adam.h"
#include "crew/optim/adamw.h"
#include "crew/optim/grad_clip.h"
#include "crew/optim/lr_decay.h"
#include "crew/optim/lr_scheduler.h"
#include "crew/optim/momentum.h"
#include "crew/optim/optimizer.h"
#include "crew/optim/sgd.h"
