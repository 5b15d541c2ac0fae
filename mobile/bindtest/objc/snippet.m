// Calls the Objective-C API of package mobile the way an iOS app would;
// scripts/mobile-check type-checks it against the generated headers (it is
// compiled, not run: there is no iOS runtime here).
#import <Foundation/Foundation.h>
#import "Mobile.objc.h"

@interface SnippetLogger : NSObject <MobileLogger>
@end

@implementation SnippetLogger
- (void)log:(int64_t)level message:(NSString *)message {
	NSLog(@"settee %lld: %@", (long long)level, message);
}
@end

@interface SnippetListener : NSObject <MobileChangeListener, MobileReplicatorListener, MobileReplicatorChangeListener, MobileDocumentReplicationListener>
@end

@implementation SnippetListener
- (void)onChange:(NSString *)changeJSON {
	NSLog(@"changed: %@", changeJSON);
}
- (void)onStatus:(MobileReplicatorStatus *)status {
	NSLog(@"%@: %lld written, error %@", status.state, (long long)status.docsWritten, status.lastError);
}
- (void)onDocuments:(NSString *)documentsJSON {
	NSLog(@"moved: %@", documentsJSON);
}
- (void)onDocumentError:(NSString *)docID rev:(NSString *)rev message:(NSString *)message {
	NSLog(@"%@ %@: %@", docID, rev, message);
}
@end

@interface SnippetResolver : NSObject <MobileConflictResolver>
@end

@implementation SnippetResolver
- (NSString *)resolve:(NSString *)docID leavesJSON:(NSString *)leavesJSON error:(NSError **)error {
	return @""; // keep the conflict
}
@end

@interface SnippetBatch : NSObject <MobileBatchFunc>
@end

@implementation SnippetBatch
- (BOOL)run:(MobileBatch *)b error:(NSError **)error {
	return [b put:@"{\"_id\":\"b1\"}" error:error] != nil;
}
@end

@interface SnippetTokens : NSObject <MobileTokenProvider>
@end

@implementation SnippetTokens
- (NSString *)token:(NSError **)error {
	return @"token";
}
@end

int snippetUse(NSString *path) {
	MobileSetLogger([[SnippetLogger alloc] init], MobileLevelInfo);
	NSError *err = nil;
	MobileDatabases *dbs = [[MobileDatabases alloc] init];
	MobileDatabase *db = [dbs open:path error:&err];
	if (db == nil) {
		NSLog(@"open: %@ (code %@)", err.localizedDescription, MobileErrorCode(err));
		if ([MobileErrorCode(err) isEqualToString:MobileCodeNotAStore]) {
			return 2;
		}
		return 1;
	}
	if (![dbs exists:path]) {
		return 1;
	}
	NSString *results = [db saveAll:@"[{\"_id\":\"x\"},{\"_id\":\"y\"}]" error:&err];
	NSLog(@"%@", results);
	if (![db inBatch:[[SnippetBatch alloc] init] error:&err]) {
		return 1;
	}
	NSString *rev = [db put:@"{\"_id\":\"a\",\"n\":1}" error:&err];
	NSString *doc = [db get:@"a" error:&err];
	NSLog(@"%@ %@ %@", rev, doc, MobileVersion);
	NSData *bytes = [@"hi" dataUsingEncoding:NSUTF8StringEncoding];
	rev = [db putAttachment:@"a" rev:rev name:@"hi.txt" contentType:@"text/plain" data:bytes error:&err];
	MobileAttachmentReader *r = [db openAttachment:@"a" rev:@"" name:@"hi.txt" error:&err];
	for (NSData *chunk = [r read:65536 error:&err]; chunk.length > 0; chunk = [r read:65536 error:&err]) {
		NSLog(@"%lu bytes", (unsigned long)chunk.length);
	}
	[r close:&err];

	SnippetListener *l = [[SnippetListener alloc] init];
	MobileListenerToken *token = [db addChangeListener:l error:&err];
	if (token == nil) {
		return 1;
	}
	MobileListenerToken *docToken = [db addDocumentChangeListener:@"a" l:l error:&err];
	int64_t resolved = 0;
	[db resolveConflicts:[[SnippetResolver alloc] init] resolved:&resolved error:&err];
	NSLog(@"%@ %lld", [db conflicts:&err], (long long)resolved);

	MobileReplicatorConfig *cfg = [[MobileReplicatorConfig alloc] init:@"https://couch.example.com/mydb"];
	cfg.direction = @"both";
	cfg.continuous = YES;
	cfg.tokens = [[SnippetTokens alloc] init];
	cfg.docIDs = @"[\"a\",\"b\"]";
	MobileReplicator *rep = [db newReplicator:cfg error:&err];
	[rep setListener:l];
	MobileListenerToken *statusToken = [rep addChangeListener:l];
	MobileListenerToken *docsToken = [rep addDocumentListener:l];
	[rep setConflictResolver:[[SnippetResolver alloc] init]];
	if (![rep start:&err]) {
		return 1;
	}
	[rep setNetworkAvailable:NO];
	MobileReplicatorStatus *st = [rep status];
	NSLog(@"%@ %lld/%lld pending %lld", st.state, (long long)st.completed, (long long)st.total, (long long)st.pending);
	[statusToken remove];
	[docsToken remove];
	[rep stop:&err];
	[token remove];
	[docToken remove];
	[db delete:@"a" rev:rev error:&err];
	if (![db close:&err]) {
		return 1;
	}
	return [dbs delete:path error:&err] ? 0 : 1;
}
