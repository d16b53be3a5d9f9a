import { expect } from "chai";
import { redactUrl, resolveDatabaseTarget } from "../../src/connection/database-url";

describe("resolveDatabaseTarget", () => {
  it("prefers --database-url over DATABASE_URL", () => {
    const target = resolveDatabaseTarget("postgres://a@db1:6543/x", { DATABASE_URL: "postgres://b@db2/y" });
    expect(target).to.include({ url: "postgres://a@db1:6543/x", address: "db1:6543", source: "--database-url" });
  });

  it("defaults the port to 5432 and reads a socket host", () => {
    expect(resolveDatabaseTarget(undefined, { DATABASE_URL: "postgresql://app@db/app" }).address).to.equal("db:5432");
    expect(resolveDatabaseTarget(undefined, { DATABASE_URL: "postgres:///app?host=/var/run/postgresql" }).address).to.equal("/var/run/postgresql:5432");
  });

  it("knows whether the URL holds a password, in the user part or as a parameter", () => {
    const hasPassword = (url: string): boolean => resolveDatabaseTarget(url, {}).hasPassword;
    expect(hasPassword("postgres://app:s3cret@db/app")).to.equal(true);
    expect(hasPassword("postgres://app@db/app?password=s3cret")).to.equal(true);
    expect(hasPassword("postgres://app@db/app")).to.equal(false);
    expect(hasPassword("postgres://app:@db/app")).to.equal(false);
  });

  it("says how to set the URL when there is none", () => {
    expect(() => resolveDatabaseTarget(undefined, {}))
      .to.throw(/no database given: set DATABASE_URL \(e\.g\. export DATABASE_URL=postgres:\/\/.*\) or pass --database-url/)
      .with.property("exitCode", 78);
  });

  it("refuses what is not a PostgreSQL URL, without echoing a password", () => {
    expect(() => resolveDatabaseTarget("not-a-url", {}))
      .to.throw(/^DATABASE_URL is not a valid PostgreSQL URL/)
      .with.property("exitCode", 78);
    expect(() => resolveDatabaseTarget("mysql://u:hunter2@h/db", {}))
      .to.throw(/"mysql:\/\/u:\*\*\*@h\/db"/)
      .with.property("message")
      .that.does.not.include("hunter2");
  });
});

describe("redactUrl", () => {
  it("hides the password only", () => {
    expect(redactUrl("postgres://app:s3cr3t@db:5432/app")).to.equal("postgres://app:***@db:5432/app");
    expect(redactUrl("postgres://app@db/app")).to.equal("postgres://app@db/app");
  });
});
