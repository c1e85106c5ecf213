//===- modelc/Export.h - Symbol visibility of the modelc library --------===//
#ifndef MODELC_PUBLIC_EXPORT_H
#define MODELC_PUBLIC_EXPORT_H

#define MODELC_API __attribute__((visibility("default")))

#endif // MODELC_PUBLIC_EXPORT_H
