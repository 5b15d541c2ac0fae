// Calls the Objective-C API of package mobile the way an iOS app would;
// scripts/mobile-check type-checks it against the generated headers.
#import <Foundation/Foundation.h>
#import "Mobile.objc.h"

@interface SnippetLogger : NSObject <MobileLogger>
@end

@implementation SnippetLogger
- (void)log:(int64_t)level message:(NSString *)message {
	NSLog(@"%lld %@", (long long)level, message);
}
@end

void snippetUse(void) {
	NSString *v = MobileVersion;
	(void)v;
	MobileSetLogger([[SnippetLogger alloc] init], MobileLevelInfo);
}
