# The test user database of scripts/lemonldap (Tests/LemonLDAP/README.md): LemonLDAP::NG's demonstration accounts
# (Auth::Demo's login form and UserDB::Demo's attributes), but the password is checked against a salted SHA-256
# in the file named by $PORTAL_AUTH_LEMONLDAP_USERS (lines `login salt sha256hex(salt . password)`) instead of
# Demo's "the password is the login". The password itself is only in the project's .run/secrets/.
package Lemonldap::NG::Portal::Auth::PortalAuthTest;

use strict;
use Mouse;
use Digest::SHA qw(sha256_hex);
use Lemonldap::NG::Portal::Main::Constants qw(PE_OK PE_BADCREDENTIALS);

extends qw(Lemonldap::NG::Portal::Auth::Demo);

sub init {
    my $self = shift;
    unless ( $ENV{PORTAL_AUTH_LEMONLDAP_USERS} and -r $ENV{PORTAL_AUTH_LEMONLDAP_USERS} ) {
        $self->logger->error('PORTAL_AUTH_LEMONLDAP_USERS names no readable file');
        return 0;
    }
    return $self->Lemonldap::NG::Portal::Auth::_WebForm::init();
}

sub authenticate {
    my ( $self, $req ) = @_;
    my $user     = $req->{user}           // '';
    my $password = $req->data->{password} // '';
    if ( open( my $users, '<', $ENV{PORTAL_AUTH_LEMONLDAP_USERS} ) ) {
        while ( my $line = <$users> ) {
            chomp $line;
            my ( $login, $salt, $hash ) = split / /, $line;
            next unless defined $hash and $login eq $user;
            close $users;
            return PE_OK if sha256_hex( $salt . $password ) eq $hash;
            last;
        }
        close $users;
    }
    $self->userLogger->warn("Bad password for $user");
    $self->setSecurity($req);
    return PE_BADCREDENTIALS;
}

1;
