#pragma once
// crew::io: data sets, transforms, samplers and the DataLoader.
#include "crew/io/batch_sampler.h"
#include "crew/io/collate.h"
#include "crew/io/dataloader.h"
#include "crew/io/dataset.h"
#include "crew/io/datasets/cifar10.h"
#include "crew/io/datasets/mnist.h"
#include "crew/io/distributed_batch_sampler.h"
#include "crew/io/sampler.h"
#include "crew/io/transforms/image_transforms.h"
#include "crew/io/transforms/random_transforms.h"
#include "crew/io/transforms/transform.h"
